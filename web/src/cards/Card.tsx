// One card, face or back, as SVG. French faces (and jokers) come from the svg-cards package
// (a file per face, made by the build: `cardHref`); the cards no package draws are drawn by
// their game's module (a "drawn" face), on a card of these dimensions.
import type { JSX } from "preact";
import { type Face, type Back, cardHref, faceLabel } from "./faces";

export const W = 169.075;
export const H = 244.64;
const VIEWBOX = `0 0 ${W} ${H}`;

const SVG_CARDS_SUIT = { c: "club", d: "diamond", h: "heart", s: "spade" } as const;
const SVG_CARDS_RANK: Record<string, string> = { A: "1", J: "jack", Q: "queen", K: "king" };

function frenchId(f: Face): string {
  if (f.kind === "joker") return f.colour === "red" ? "joker_red" : "joker_black";
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

export function CardSvg({ face, back }: { face: Face | null; back: Back }): JSX.Element {
  return (
    <svg class="card-svg" viewBox={VIEWBOX} aria-hidden="true" focusable="false">
      {face === null ? <BackFace back={back} />
        : face.kind === "drawn" ? face.draw()
        : <use href={cardHref(frenchId(face))} />}
    </svg>
  );
}

/** A card shown, not played from: the centre, the tricks, the summaries. */
export function CardView({ face, back, code, small }: {
  face: Face | null; back: Back; code?: string; small?: boolean;
}): JSX.Element {
  return (
    <span class={`card ${small ? "small" : ""}`} role="img" aria-label={face ? faceLabel(face) : "card back"}
      data-card={code}>
      <CardSvg face={face} back={back} />
    </span>
  );
}
