// The player's hand: real faces, overlapped to fit the width, in rows on a narrow screen so
// that every card keeps a 44 px target. Click or Space picks a card; the arrows move along
// the hand; Enter plays what is picked.
import type { JSX } from "preact";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { CardSvg } from "../cards/Card";
import { type Back, faceLabel } from "../cards/faces";
import type { HandCard } from "../games/types";

const MIN_STEP = 44; // the visible part of a covered card: a touch target

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

export function Hand({ cards, back, selected, onToggle, onPlay, enabled }: {
  cards: HandCard[]; back: Back; selected: Set<number>; enabled: boolean;
  onToggle: (i: number) => void; onPlay: () => void;
}): JSX.Element {
  const box = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(360);
  const [focus, setFocus] = useState(0);
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
  const narrow = width < 640;
  const cardW = narrow ? 62 : 92;
  const cardH = Math.round(cardW * 1.447);
  const { step, perRow, rows } = layoutHand(cards.length, width, cardW);
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
    <div class="hand" ref={box} style={{ height: `${height}px` }} role="group"
      aria-label={`your hand, ${cards.length} cards: arrows to move, space to pick, enter to play`}>
      {cards.map((c, i) => {
        const row = Math.floor(i / perRow);
        const col = i % perRow;
        const picked = selected.has(i);
        return (
          <button type="button" key={`${c.code}-${i}`} class={`card hand-card ${picked ? "selected" : ""}`}
            data-card={c.code} data-index={i} aria-pressed={picked} aria-label={faceLabel(c.face)}
            tabIndex={i === focus ? 0 : -1} disabled={!enabled}
            style={{ left: `${offset + col * step}px`, top: `${row * rowStep + (picked ? 0 : lift) + arc(i)}px`,
              width: `${cardW}px`, height: `${cardH}px`, zIndex: i + 1,
              transform: fan ? `rotate(${((i - mid) * 1.4).toFixed(1)}deg)` : undefined, transformOrigin: "50% 100%" }}
            onClick={() => { setFocus(i); onToggle(i); }} onKeyDown={(e) => onKey(e, i)}>
            <CardSvg face={c.face} back={back} />
          </button>
        );
      })}
    </div>
  );
}
