// One seat at the table: name, bot badge and level, whether its player is here (presence),
// cards left as backs, what it last played, its badges (parties, announcements...),
// highlighted on turn with its timer ring.
import type { JSX } from "preact";
import { CardSvg } from "../cards/Card";
import type { Back } from "../cards/faces";
import { Presence, type SeatInfo } from "../gen/croupier/v1/croupier_pb";
import type { SeatNote } from "../games/types";
import { Badge } from "./bits";
import { t } from "../i18n";

/** A bot's mark where a badge has no room: a small robot head. */
function BotIcon(): JSX.Element {
  return (
    <svg viewBox="0 0 16 16" width="14" height="14" aria-hidden="true">
      <rect x="2.5" y="4.5" width="11" height="9" rx="2.5" fill="none" stroke="currentColor" stroke-width="1.6" />
      <circle cx="6" cy="9" r="1.3" fill="currentColor" /><circle cx="10" cy="9" r="1.3" fill="currentColor" />
      <path d="M8 4.5V2" stroke="currentColor" stroke-width="1.6" stroke-linecap="round" />
    </svg>
  );
}

export interface Timer { seconds: number; left: number }

function TimerRing({ timer }: { timer: Timer }): JSX.Element {
  const r = 16;
  const c = 2 * Math.PI * r;
  const start = c * (1 - timer.left / timer.seconds);
  return (
    <svg class="timer-ring" viewBox="0 0 40 40" role="timer" aria-label={t("table.turn.seconds", { n: Math.ceil(timer.left) })}>
      <circle cx="20" cy="20" r={r} class="timer-track" />
      <circle cx="20" cy="20" r={r} class="timer-left" stroke-dasharray={c}
        style={{ strokeDashoffset: start, animationDuration: `${timer.left}s`, ["--c" as string]: `${c}` }} />
    </svg>
  );
}

// a person's seat: here (a stream of theirs is open), away (the server plays for them), gone
const PRESENCE: Record<number, string> = { [Presence.CONNECTED]: "here", [Presence.AWAY]: "away", [Presence.GONE]: "gone" };

function PresenceBadge({ info }: { info: SeatInfo }): JSX.Element | null {
  // a turn timer run out repeatedly is away too, whatever the connection
  const p = info.away && info.presence !== Presence.GONE ? Presence.AWAY : info.presence;
  const shown = info.occupied && !info.isBot ? PRESENCE[p] : undefined;
  if (!shown) return null;
  return (
    <span class={`presence presence-${shown}`} data-presence={shown} title={t(`table.presence.${shown}.title`)}>
      <span class="presence-dot" aria-hidden="true" /><span class="presence-word">{t(`table.presence.${shown}`)}</span>
    </span>
  );
}

/** A seat. `compact` (opponents at a table of four and more): one line of name and score, the
 * badges folded into one that opens them, the cards in hand as a number on a card back. */
export function Seat({ info, index, name, note, cardsLeft, onTurn, mine, back, timer, position, score, compact = false }: {
  info: SeatInfo | undefined; index: number; name: string; note: SeatNote; cardsLeft: number | undefined; onTurn: boolean;
  mine: boolean; back: Back; timer?: Timer; position: string; score?: string; compact?: boolean;
}): JSX.Element {
  const shownBacks = Math.min(cardsLeft ?? 0, 7);
  const badges = note.badges ?? [];
  const bot = info?.isBot ? t("table.seat.bot", { level: info.botLevel || t("table.seat.level") }) : "";
  const head = (
    <div class="seat-head">
      {onTurn && timer && timer.left > 0 && <TimerRing timer={timer} />}
      <span class="seat-name">{name}</span>
      {!compact && info?.isBot && <Badge text={bot} tone="bot" />}
      {!compact && info && <PresenceBadge info={info} />}
      {!info?.occupied && <Badge text={t("table.seat.openBadge")} tone="open" />}
      {!compact && score !== undefined && <span class="seat-score" title={t("table.seat.score")}>{score}</span>}
    </div>
  );
  if (compact) {
    return (
      <div class={`seat seat-${position} compact ${onTurn ? "to-act" : ""}`} data-seat={index}
        aria-label={onTurn ? t("table.seat.onTurn", { name }) : name} title={[name, bot, ...badges].filter(Boolean).join(" · ")}>
        {head}
        <div class="seat-meta">
          {cardsLeft !== undefined && (
            <span class="seat-count" aria-label={t("table.cardsLeft", { n: cardsLeft })}>
              <span class="count-back"><CardSvg face={null} back={back} /></span>
              <span class="cards-left">{cardsLeft}</span>
            </span>
          )}
          {score !== undefined && <span class="seat-score" title={t("table.seat.score")}>{score}</span>}
          {info?.isBot && <span class="bot-mark" title={bot} aria-label={bot} role="img"><BotIcon /></span>}
          {info && <PresenceBadge info={info} />}
        </div>
        {badges.length > 0 && (badges.length > 1 ? (
          <details class="seat-badges folded">
            <summary><Badge text={badges[0]} tone="game" /><span class="more">+{badges.length - 1}</span></summary>
            <div class="badge-list">{badges.slice(1).map((b) => <Badge key={b} text={b} tone="game" />)}</div>
          </details>
        ) : <div class="seat-badges"><Badge text={badges[0]} tone="game" /></div>)}
        {note.text && <div class="seat-text">{note.text}</div>}
      </div>
    );
  }
  return (
    <div class={`seat seat-${position} ${onTurn ? "to-act" : ""} ${mine ? "me" : ""}`} data-seat={index}
      aria-label={onTurn ? t("table.seat.onTurn", { name }) : name}>
      {head}
      {!mine && cardsLeft !== undefined && (
        <div class="seat-backs" aria-label={t("table.cardsLeft", { n: cardsLeft })} style={{ width: `${shownBacks * 7 + 72}px` }}>
          {Array.from({ length: shownBacks }, (_, i) => (
            <span class="back-card" key={i} style={{ left: `${i * 7}px` }}><CardSvg face={null} back={back} /></span>
          ))}
          <span class="cards-left" style={{ left: `${shownBacks * 7 + 30}px` }}>{cardsLeft}</span>
        </div>
      )}
      {badges.length > 0 && <div class="seat-badges">{badges.map((b) => <Badge key={b} text={b} tone="game" />)}</div>}
      {note.text && <div class="seat-text">{note.text}</div>}
    </div>
  );
}
