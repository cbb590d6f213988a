// One card, face or back, as SVG. French faces (and jokers) come from the svg-cards package
// (copied to dist/cards.svg by the build); Dos and Dobro cards, which no package draws, are
// drawn here.
import type { JSX } from "preact";
import { type Face, type Back, faceLabel } from "./faces";

const W = 169.075;
const H = 244.64;
const VIEWBOX = `0 0 ${W} ${H}`;

const SVG_CARDS_SUIT = { c: "club", d: "diamond", h: "heart", s: "spade" } as const;
const SVG_CARDS_RANK: Record<string, string> = { A: "1", J: "jack", Q: "queen", K: "king" };

function frenchId(f: Face): string {
  if (f.kind === "joker") return f.colour === "red" ? "joker_red" : "joker_black";
  if (f.kind !== "french") return "back";
  return `${SVG_CARDS_SUIT[f.suit]}_${SVG_CARDS_RANK[f.rank] ?? f.rank}`;
}

const DOS_FILL: Record<string, string> = { b: "#1f5fbf", g: "#2e8b3a", r: "#c8202c", y: "#e0a800", w: "#222" };

function DosFace({ f }: { f: Extract<Face, { kind: "dos" }> }): JSX.Element {
  const fill = DOS_FILL[f.colour];
  const text = f.colour === "w" ? "2" : f.value;
  return (
    <g>
      <rect x="2" y="2" width={W - 4} height={H - 4} rx="14" fill="#fff" stroke="#333" stroke-width="2" />
      <rect x="10" y="10" width={W - 20} height={H - 20} rx="10" fill={fill} />
      {f.colour === "w" ? (
        <g>
          <path d={`M${W / 2} ${H / 2} L${W / 2} 40 A70 85 0 0 1 ${W - 22} ${H / 2} Z`} fill={DOS_FILL.r} />
          <path d={`M${W / 2} ${H / 2} L${W - 22} ${H / 2} A70 85 0 0 1 ${W / 2} ${H - 40} Z`} fill={DOS_FILL.y} />
          <path d={`M${W / 2} ${H / 2} L${W / 2} ${H - 40} A70 85 0 0 1 22 ${H / 2} Z`} fill={DOS_FILL.g} />
          <path d={`M${W / 2} ${H / 2} L22 ${H / 2} A70 85 0 0 1 ${W / 2} 40 Z`} fill={DOS_FILL.b} />
        </g>
      ) : (
        <ellipse cx={W / 2} cy={H / 2} rx="62" ry="86" fill="#fff" transform={`rotate(20 ${W / 2} ${H / 2})`} />
      )}
      <text x={W / 2} y={H / 2 + 30} text-anchor="middle" font-size={text.length > 1 ? 78 : 96} font-weight="900"
        font-family="Arial Black, Arial, sans-serif" fill={f.colour === "w" ? "#fff" : fill}
        stroke={f.colour === "w" ? "#222" : "none"} stroke-width="3">{text}</text>
      <text x="22" y="48" font-size="34" font-weight="900" font-family="Arial, sans-serif" fill="#fff">{text}</text>
      <text x={W - 22} y={H - 24} font-size="34" font-weight="900" font-family="Arial, sans-serif" fill="#fff"
        text-anchor="end">{text}</text>
    </g>
  );
}

// Dobro's numbers by band, so that a hand reads at a glance; the specials stand apart
const DOBRO_FILL = (v: string): string =>
  v === "J" ? "#6a1b9a" : v === "S" ? "#37474f" : v === "R" ? "#00695c"
    : Number(v) <= 4 ? "#1565c0" : Number(v) <= 8 ? "#2e7d32" : "#c62828";

function DobroFace({ f }: { f: Extract<Face, { kind: "dobro" }> }): JSX.Element {
  const fill = DOBRO_FILL(f.value);
  const big = f.value === "J" ? "★" : f.value === "S" ? "⊘" : f.value === "R" ? "⇄" : f.value;
  const word = f.value === "J" ? "JOKER" : f.value === "S" ? "SKIP" : f.value === "R" ? "REVERSE" : "";
  const corner = f.value === "J" ? "★" : f.value === "S" ? "S" : f.value === "R" ? "R" : f.value;
  return (
    <g>
      <rect x="2" y="2" width={W - 4} height={H - 4} rx="14" fill="#fffaf0" stroke="#333" stroke-width="2" />
      <rect x="12" y="12" width={W - 24} height={H - 24} rx="10" fill="none" stroke={fill} stroke-width="5" />
      <circle cx={W / 2} cy={H / 2 - 4} r="58" fill={fill} />
      <text x={W / 2} y={H / 2 + 26} text-anchor="middle" font-size={big.length > 1 ? 66 : 82} font-weight="800"
        font-family="Arial, sans-serif" fill="#fff">{big}</text>
      {word && <text x={W / 2} y={H - 36} text-anchor="middle" font-size="22" font-weight="700"
        font-family="Arial, sans-serif" fill={fill}>{word}</text>}
      <text x="24" y="50" font-size="32" font-weight="800" font-family="Arial, sans-serif" fill={fill}>{corner}</text>
      <text x={W - 24} y={H - 66} font-size="32" font-weight="800" font-family="Arial, sans-serif" fill={fill}
        text-anchor="end" transform={`rotate(180 ${W - 40} ${H - 78})`}>{corner}</text>
    </g>
  );
}

function BackFace({ back }: { back: Back }): JSX.Element {
  if (back === "french") return <use href="cards.svg#back" fill="#1b4f9c" />;
  const fill = back === "dos" ? "#222" : "#7a2e12";
  return (
    <g>
      <rect x="2" y="2" width={W - 4} height={H - 4} rx="14" fill="#fff" stroke="#333" stroke-width="2" />
      <rect x="10" y="10" width={W - 20} height={H - 20} rx="10" fill={fill} />
      <ellipse cx={W / 2} cy={H / 2} rx="56" ry="80" fill="none" stroke="#fff" stroke-width="6"
        transform={`rotate(20 ${W / 2} ${H / 2})`} />
      <text x={W / 2} y={H / 2 + 14} text-anchor="middle" font-size="40" font-weight="900"
        font-family="Arial Black, Arial, sans-serif" fill="#fff">{back === "dos" ? "DOS" : "DOBRO"}</text>
    </g>
  );
}

export function CardSvg({ face, back }: { face: Face | null; back: Back }): JSX.Element {
  return (
    <svg class="card-svg" viewBox={VIEWBOX} aria-hidden="true" focusable="false">
      {face === null ? <BackFace back={back} />
        : face.kind === "dos" ? <DosFace f={face} />
        : face.kind === "dobro" ? <DobroFace f={face} />
        : <use href={`cards.svg#${frenchId(face)}`} />}
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
