// One seat at the table: name, bot badge and level, whether its player is here (presence),
// cards left as backs, what it last played, its badges (parties, announcements...),
// highlighted on turn with its timer ring.
import type { JSX } from "preact";
import { CardSvg } from "../cards/Card";
import type { Back } from "../cards/faces";
import { Presence, type SeatInfo } from "../gen/croupier/v1/croupier_pb";
import type { SeatNote } from "../games/types";
import { Badge } from "./bits";

export interface Timer { seconds: number; left: number }

function TimerRing({ timer }: { timer: Timer }): JSX.Element {
  const r = 16;
  const c = 2 * Math.PI * r;
  const start = c * (1 - timer.left / timer.seconds);
  return (
    <svg class="timer-ring" viewBox="0 0 40 40" role="timer" aria-label={`${Math.ceil(timer.left)} seconds left`}>
      <circle cx="20" cy="20" r={r} class="timer-track" />
      <circle cx="20" cy="20" r={r} class="timer-left" stroke-dasharray={c}
        style={{ strokeDashoffset: start, animationDuration: `${timer.left}s`, ["--c" as string]: `${c}` }} />
    </svg>
  );
}

// a person's seat: here (a stream of theirs is open), away (the server plays for them), gone
const PRESENCE: Record<number, [word: string, title: string]> = {
  [Presence.CONNECTED]: ["here", "connected now"],
  [Presence.AWAY]: ["away", "not connected, or out of time: the server plays for this seat"],
  [Presence.GONE]: ["gone", "not seen for a long while"],
};

function PresenceBadge({ info }: { info: SeatInfo }): JSX.Element | null {
  // a turn timer run out repeatedly is away too, whatever the connection
  const p = info.away && info.presence !== Presence.GONE ? Presence.AWAY : info.presence;
  const shown = info.occupied && !info.isBot ? PRESENCE[p] : undefined;
  if (!shown) return null;
  return (
    <span class={`presence presence-${shown[0]}`} data-presence={shown[0]} title={shown[1]}>
      <span class="presence-dot" aria-hidden="true" />{shown[0]}
    </span>
  );
}

export function Seat({ info, index, name, note, cardsLeft, onTurn, mine, back, timer, position, score }: {
  info: SeatInfo | undefined; index: number; name: string; note: SeatNote; cardsLeft: number | undefined; onTurn: boolean;
  mine: boolean; back: Back; timer?: Timer; position: string; score?: string;
}): JSX.Element {
  const shownBacks = Math.min(cardsLeft ?? 0, 7);
  return (
    <div class={`seat seat-${position} ${onTurn ? "to-act" : ""} ${mine ? "me" : ""}`} data-seat={index}
      aria-label={`${name}${onTurn ? ", on turn" : ""}`}>
      <div class="seat-head">
        {onTurn && timer && timer.left > 0 && <TimerRing timer={timer} />}
        <span class="seat-name">{name}</span>
        {info?.isBot && <Badge text={`bot · ${info.botLevel || "level"}`} tone="bot" />}
        {info && <PresenceBadge info={info} />}
        {!info?.occupied && <Badge text="open" tone="open" />}
        {score !== undefined && <span class="seat-score" title="match score">{score}</span>}
      </div>
      {!mine && cardsLeft !== undefined && (
        <div class="seat-backs" aria-label={`${cardsLeft} cards in hand`} style={{ width: `${shownBacks * 7 + 72}px` }}>
          {Array.from({ length: shownBacks }, (_, i) => (
            <span class="back-card" key={i} style={{ left: `${i * 7}px` }}><CardSvg face={null} back={back} /></span>
          ))}
          <span class="cards-left" style={{ left: `${shownBacks * 7 + 30}px` }}>{cardsLeft}</span>
        </div>
      )}
      {(note.badges?.length ?? 0) > 0 && (
        <div class="seat-badges">{note.badges!.map((b) => <Badge key={b} text={b} tone="game" />)}</div>
      )}
      {note.text && <div class="seat-text">{note.text}</div>}
    </div>
  );
}
