// One card, face or back, as SVG. French faces (and jokers) come from the svg-cards package
// (a file per face, made by the build: `cardHref`); the cards no package draws are drawn by
// their game's module (a "drawn" face), on a card of these dimensions.
import type { JSX } from "preact";
import { type Face, type Back, cardHref, faceLabel } from "./faces";
import { t } from "../i18n";

export const W = 169.075;
export const H = 244.64;
const VIEWBOX = `0 0 ${W} ${H}`;

const SVG_CARDS_SUIT = { c: "club", d: "diamond", h: "heart", s: "spade" } as const;
const SVG_CARDS_RANK: Record<string, string> = { A: "1", J: "jack", Q: "queen", K: "king" };

function frenchId(f: Face): string {
  if (f.kind !== "french") return "back";
  return `${SVG_CARDS_SUIT[f.suit]}_${SVG_CARDS_RANK[f.rank] ?? f.rank}`;
}

function BackFace({ back }: { back: Back }): JSX.Element {
  if (back === "french") return <use href={cardHref("back")} fill="#1b4f9c" />;
  const { fill, word } = back;
  return (
    <g>
      <rect x="2" y="2" width={W - 4} height={H - 4} rx="14" fill="#fff" stroke="#333" stroke-width="2" />
      <rect x="10" y="10" width={W - 20} height={H - 20} rx="10" fill={fill} />
      <ellipse cx={W / 2} cy={H / 2} rx="56" ry="80" fill="none" stroke="#fff" stroke-width="6"
        transform={`rotate(20 ${W / 2} ${H / 2})`} />
      <text x={W / 2} y={H / 2 + 14} text-anchor="middle" font-size="40" font-weight="900"
        font-family="Arial Black, Arial, sans-serif" fill="#fff">{word}</text>
    </g>
  );
}

// The two jokers drawn here rather than taken from the package, whose two differ only in the
// colour of one word: as on real decks, the big joker is in colour (red, with a crown) and the
// small one in black and grey (with a jester's cap), each with its own word down the side.
function JokerFace({ big }: { big: boolean }): JSX.Element {
  const ink = big ? "#c62828" : "#263238";
  const panel = big ? "#fde3e0" : "#e4e7ea";
  const word = big ? "BIG" : "SMALL";
  const letters = "JOKER".split("");
  return (
    <g>
      <rect x="2" y="2" width={W - 4} height={H - 4} rx="12" fill="#fff" stroke="#333" stroke-width="2" />
      <rect x="36" y="22" width={W - 58} height={H - 44} rx="10" fill={panel} stroke={ink} stroke-width="3" />
      {letters.map((l, i) => (
        <text key={i} x="20" y={44 + i * 30} text-anchor="middle" font-size="26" font-weight="900"
          font-family="Arial Black, Arial, sans-serif" fill={ink}>{l}</text>
      ))}
      {big ? (
        <g transform={`translate(${W / 2 + 14} ${H / 2 - 8})`}>
          <path d="M-46 28 L-52 -26 L-24 2 L0 -40 L24 2 L52 -26 L46 28 Z" fill="#f2b705" stroke={ink} stroke-width="4" />
          <rect x="-48" y="28" width="96" height="16" rx="4" fill={ink} />
          <circle cx="0" cy="-44" r="8" fill={ink} /><circle cx="-52" cy="-30" r="7" fill={ink} />
          <circle cx="52" cy="-30" r="7" fill={ink} />
          <circle cx="0" cy="10" r="9" fill={ink} />
        </g>
      ) : (
        <g transform={`translate(${W / 2 + 14} ${H / 2 - 6})`}>
          <path d="M-44 30 C-40 -10 -30 -30 -10 -34 C-26 -14 -20 6 0 14 C20 6 26 -14 10 -34 C30 -30 40 -10 44 30 Z"
            fill="#90a4ae" stroke={ink} stroke-width="4" />
          <rect x="-46" y="30" width="92" height="14" rx="4" fill={ink} />
          <circle cx="-10" cy="-38" r="8" fill={ink} /><circle cx="10" cy="-38" r="8" fill={ink} />
        </g>
      )}
      <text x={W / 2 + 14} y={H - 40} text-anchor="middle" font-size={big ? 34 : 28} font-weight="900"
        font-family="Arial Black, Arial, sans-serif" fill={ink}>{word}</text>
    </g>
  );
}

export function CardSvg({ face, back }: { face: Face | null; back: Back }): JSX.Element {
  return (
    <svg class="card-svg" viewBox={VIEWBOX} aria-hidden="true" focusable="false">
      {face === null ? <BackFace back={back} />
        : face.kind === "drawn" ? face.draw()
        : face.kind === "joker" ? <JokerFace big={face.colour === "red"} />
        : <use href={cardHref(frenchId(face))} />}
    </svg>
  );
}

/** A stable name of a face, for tests and tools: "8h", "joker_red", "blue 7". */
export function faceId(f: Face): string {
  return f.kind === "french" ? `${f.rank}${f.suit}` : f.kind === "joker" ? `joker_${f.colour}` : f.label;
}

/** A card shown, not played from: the centre, the tricks, the summaries. */
export function CardView({ face, back, code, small }: {
  face: Face | null; back: Back; code?: string; small?: boolean;
}): JSX.Element {
  return (
    <span class={`card ${small ? "small" : ""}`} role="img" aria-label={face ? faceLabel(face) : t("games.card.back")}
      data-card={code} data-face={face ? faceId(face) : undefined}>
      <CardSvg face={face} back={back} />
    </span>
  );
}
