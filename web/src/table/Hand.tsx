// The player's hand: real faces, overlapped to fit the width, in rows on a narrow screen so
// that every card keeps a 44 px target. Cards that can neither start nor continue a legal move
// are dimmed. A tap picks a card (or starts a new pick where the old one cannot grow), and
// plays at once where that card alone is a whole move and nothing could be added to it (the
// player may turn that off: "tap then confirm", kept by the browser). Under the hand, a line
// says what the pick is ("Bomb of 5s") or what it lacks; a Hint button, where the game has
// one, cycles through the legal plays. Space picks and Enter plays from the keyboard.
import type { JSX } from "preact";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { CardSvg, faceId } from "../cards/Card";
import { type Back, faceLabel } from "../cards/faces";
import type { GameModule, HandCard } from "../games/types";
import { t } from "../i18n";
import { liveCards, matchSelection, prefer, preferredMove, tap } from "./select";

const MIN_STEP = 44; // the visible part of a covered card: a touch target
const TAP_CONFIRM_KEY = "croupier.tapThenConfirm";

export function layoutHand(n: number, width: number, cardW: number): { step: number; perRow: number; rows: number } {
  if (n <= 1) return { step: cardW, perRow: 1, rows: 1 };
  const fits = Math.floor((width - cardW) / (n - 1));
  // one row: overlapped like a hand held in a fan, each card's index corner in view
  if (fits >= MIN_STEP) return { step: Math.min(Math.round(cardW * 0.72), fits), perRow: n, rows: 1 };
  const perRowMax = Math.max(1, Math.floor((width - cardW) / MIN_STEP) + 1);
  const rows = Math.ceil(n / perRowMax);
  const perRow = Math.ceil(n / rows);
  const step = perRow > 1 ? Math.min(cardW + 6, Math.floor((width - cardW) / (perRow - 1))) : cardW;
  return { step, perRow, rows };
}

/** What the hand needs to play by itself: the game, the legal moves, and the table's hands. */
export interface PlayProps<G = unknown> {
  game: GameModule<G>;
  g: G;
  legal: string[];
  names: string[];
  target: string | undefined;
  busy: boolean;
  /** replaces the pick */
  select: (picked: Set<number>) => void;
  send: (move: string) => void;
}

export function Hand({ cards, back, selected, onToggle, onPlay, enabled, play }: {
  cards: HandCard[]; back: Back; selected: Set<number>; enabled: boolean;
  onToggle: (i: number) => void; onPlay: () => void; play?: PlayProps<any>;
}): JSX.Element {
  const box = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(360);
  const [focus, setFocus] = useState(0);
  const [tapConfirm, setTapConfirm] = useState(() => localStorage.getItem(TAP_CONFIRM_KEY) === "1");
  const [hintAt, setHintAt] = useState(0);
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    const measure = () => setWidth(el.clientWidth);
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  useEffect(() => {
    if (focus >= cards.length) setFocus(Math.max(0, cards.length - 1));
  }, [cards.length]);
  const legalKey = play?.legal.join("|") ?? "";
  useEffect(() => {
    setHintAt(0);
    prefer(undefined);
  }, [legalKey]);
  const codes = cards.map((c) => c.code);
  const picked = [...selected].sort((a, b) => a - b);
  const live = play ? liveCards(play.game, play.g, play.legal, codes, picked, play.target) : null;

  const narrow = width < 640;
  // a long hand (20 cards and more) gets a smaller card on the desktop, so one row keeps every
  // index corner in view
  const cardW = narrow ? 62 : cards.length > 16 ? 80 : 92;
  const cardH = Math.round(cardW * 1.447);
  // the fan's turn takes a few pixels at each end: measured against a slightly narrower box
  const room = Math.max(cardW, width - (narrow ? 4 : 24));
  const { step, perRow, rows } = layoutHand(cards.length, room, cardW);
  const lift = 16;
  // a picked card rises by `lift` into the row above: the covered card's middle stays in view
  // (the point a tap or click lands on)
  const rowStep = Math.max(Math.round(cardH * 0.58), Math.ceil(cardH / 2) + lift + 2);
  // a slight arc and turn on one row; rows on a phone stay straight
  const fan = rows === 1 && cards.length > 2;
  const mid = (cards.length - 1) / 2;
  const arc = (i: number) => (fan ? Math.round(((i - mid) / Math.max(mid, 1)) ** 2 * 10) : 0);
  const height = (rows - 1) * rowStep + cardH + lift + (fan ? 10 : 0);
  const used = (Math.min(perRow, cards.length) - 1) * step + cardW;
  const offset = Math.max(0, Math.floor((width - used) / 2));

  const click = (i: number) => {
    setFocus(i);
    if (!play) return onToggle(i);
    const r = tap(play.game, play.g, play.legal, codes, picked, i, play.target, !tapConfirm && !play.busy);
    prefer(undefined);
    play.select(new Set(r.picked));
    if (r.play) play.send(r.play);
  };
  const onKey = (e: KeyboardEvent, i: number) => {
    const move = (to: number) => {
      e.preventDefault();
      const j = Math.max(0, Math.min(cards.length - 1, to));
      setFocus(j);
      box.current?.querySelectorAll<HTMLButtonElement>("button.hand-card")[j]?.focus();
    };
    if (e.key === "ArrowRight") move(i + 1);
    else if (e.key === "ArrowLeft") move(i - 1);
    else if (e.key === "ArrowDown") move(i + perRow);
    else if (e.key === "ArrowUp") move(i - perRow);
    else if (e.key === "Home") move(0);
    else if (e.key === "End") move(cards.length - 1);
    else if (e.key === "Enter") {
      e.preventDefault();
      onPlay();
    }
  };
  return (
    <div class="hand-area">
      <div class="hand" ref={box} style={{ height: `${height}px` }} role="group"
        aria-label={t("games.hand.aria", { n: cards.length })}>
        {cards.map((c, i) => {
          const row = Math.floor(i / perRow);
          const col = i % perRow;
          const isPicked = selected.has(i);
          const dim = !!live && !live.has(i);
          return (
            <button type="button" key={`${c.code}-${i}`}
              class={`card hand-card ${isPicked ? "selected" : ""} ${dim ? "dim" : ""} ${c.mark ? "marked" : ""}`}
              data-card={c.code} data-face={faceId(c.face)} data-index={i} data-mark={c.mark}
              aria-pressed={isPicked} aria-disabled={dim || undefined}
              aria-label={c.mark ? `${faceLabel(c.face)} (${t(`games.mark.${c.mark}`)})` : faceLabel(c.face)}
              tabIndex={i === focus ? 0 : -1} disabled={!enabled}
              style={{ left: `${offset + col * step}px`, top: `${row * rowStep + (isPicked ? 0 : lift) + arc(i)}px`,
                width: `${cardW}px`, height: `${cardH}px`, zIndex: i + 1,
                transform: fan ? `rotate(${((i - mid) * (cards.length > 14 ? 0.8 : 1.4)).toFixed(1)}deg)` : undefined,
                transformOrigin: "50% 100%" }}
              onClick={(e) => {
                // a click from the keyboard (Space) only picks: Enter plays
                if (e.detail === 0) { setFocus(i); onToggle(i); } else click(i);
              }} onKeyDown={(e) => onKey(e, i)}>
              <CardSvg face={c.face} back={back} />
              {c.mark && <span class="hand-mark" aria-hidden="true">{t(`games.mark.${c.mark}`)}</span>}
            </button>
          );
        })}
      </div>
      {play && <PickLine play={play} codes={codes} picked={picked} hintAt={hintAt} setHintAt={setHintAt}
        tapConfirm={tapConfirm} setTapConfirm={(on) => {
          setTapConfirm(on);
          localStorage.setItem(TAP_CONFIRM_KEY, on ? "1" : "0");
        }} />}
    </div>
  );
}

/** The line under the hand: the pick named, or what it lacks; a choice among moves that take
 * the same cards (a joker's value); Hint; the tap option. */
function PickLine({ play, codes, picked, hintAt, setHintAt, tapConfirm, setTapConfirm }: {
  play: PlayProps<any>; codes: string[]; picked: number[]; hintAt: number; setHintAt: (n: number) => void;
  tapConfirm: boolean; setTapConfirm: (on: boolean) => void;
}): JSX.Element | null {
  const { game, g, legal, names } = play;
  const [, redraw] = useState(0);
  const hints = game.hints?.(legal, g) ?? [];
  const cardMoves = legal.some((m) => game.plan(m, g));
  if (!cardMoves) {
    return legal.length && game.playing?.(g) && hints.length === 0 && !picked.length
      ? <div class="pick-line" id="pick-line"><span id="selection" class="selection none" role="status">
        {t("games.select.nothingPlays")}</span></div> : null;
  }
  const pickedCodes = picked.map((i) => codes[i]);
  const m = pickedCodes.length ? matchSelection(game, g, legal, pickedCodes, play.target, false) : null;
  const several = m?.kind === "several" ? m.moves : null;
  // a compact choice, set to the first move until the player picks another: Play sends it
  if (several && !several.includes(preferredMove() ?? "")) prefer(several[0]);
  const chosen = preferredMove();
  const showHint = () => {
    if (!hints.length) return;
    const move = hints[hintAt % hints.length];
    const take = [...(game.plan(move, g)?.cards ?? [])];
    const next: number[] = [];
    codes.forEach((c, i) => {
      const k = take.indexOf(c);
      if (k >= 0) {
        take.splice(k, 1);
        next.push(i);
      }
    });
    play.select(new Set(next));
    prefer(move);
    setHintAt(hintAt + 1);
  };
  return (
    <div class="pick-line" id="pick-line">
      <span id="selection" class={`selection ${m?.kind ?? "empty"}`} role="status" aria-live="polite">
        {!m ? ""
          : m.kind === "one" ? game.label(m.move, g, names)
          : m.kind === "several" ? (game.chooseText?.(several!, g) ?? t("games.select.choose"))
          : m.reason}
      </span>
      {several && (
        <label class="choose-move">
          <span class="sr-only">{t("games.select.chooseLabel")}</span>
          <select id="choose-move" value={chosen}
            onChange={(e) => { prefer(e.currentTarget.value || undefined); redraw((n) => n + 1); }}>
            {several.map((mv) => <option key={mv} value={mv}>{game.choiceLabel?.(mv, g) ?? game.label(mv, g, names)}</option>)}
          </select>
        </label>
      )}
      {hints.length > 0 && (
        <button type="button" id="hint" class="secondary hint-button" onClick={showHint}
          title={t("games.select.hintTitle")}>{t("games.select.hint")}</button>
      )}
      <label class="tap-confirm" title={t("games.select.tapConfirmTitle")}>
        <input type="checkbox" id="tap-confirm" checked={tapConfirm}
          onChange={(e) => setTapConfirm(e.currentTarget.checked)} />
        {t("games.select.tapConfirm")}
      </label>
    </div>
  );
}
