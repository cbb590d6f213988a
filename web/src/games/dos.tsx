// Dos: the centre row in colour, each card a target to pick before the hand cards that match
// it; the Dos call and the catch as always-on buttons.
import type { JSX } from "preact";
import type { Back, Face } from "../cards/faces";
import { CardSvg, H, W } from "../cards/Card";
import { CentreLine } from "../table/bits";
import type { GameView } from "../gen/croupier/v1/croupier_pb";
import type { DosView } from "../gen/croupier/v1/dos_pb";
import { sumSheet } from "./sheet";
import type { GameModule, SeatNote } from "./types";

// Dos cards, which no package draws: a colour (or wild) and a number or #
interface DosCard { colour: "b" | "g" | "r" | "y" | "w"; value: string }
const COLOURS: Record<string, string> = { b: "blue", g: "green", r: "red", y: "yellow", w: "wild" };
const BACK: Back = { fill: "#222", word: "DOS" };

const DOS_FILL: Record<string, string> = { b: "#1f5fbf", g: "#2e8b3a", r: "#c8202c", y: "#e0a800", w: "#222" };

function DosFace({ f }: { f: DosCard }): JSX.Element {
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

function card(code: string): DosCard {
  if (code === "w2") return { colour: "w", value: "2" };
  return { colour: code[0] as "b" | "g" | "r" | "y", value: code.slice(1) };
}

function words(code: string): string {
  const f = card(code);
  if (f.colour === "w") return "wild DOS (a 2 of any colour)";
  return f.value === "#" ? `${COLOURS[f.colour]} wild #` : `${COLOURS[f.colour]} ${f.value}`;
}

function face(code: string): Face {
  const f = card(code);
  return { kind: "drawn", label: words(code), draw: () => <DosFace f={f} /> };
}

function plan(m: string): { cards: string[]; target?: string } | null {
  const on = m.match(/^(\S+) on (\S+)$/);
  if (on) return { cards: on[1].split("+"), target: on[2] };
  const add = m.match(/^add (\S+)$/);
  if (add) return { cards: [add[1]] };
  return null;
}

function label(m: string): string {
  const p = plan(m);
  if (p && p.target) return `${p.cards.map(words).join(" + ")} on ${words(p.target)}`;
  if (p) return `Add ${words(p.cards[0])} to the row`;
  return { draw: "Draw a card", end: "End my turn", "end dos": "End my turn, calling “Dos!”", dos: "Call “Dos!”",
    catch: "Catch! (no “Dos” called)" }[m] ?? m;
}

export const dos: GameModule<DosView> = {
  name: "dos",
  back: BACK,
  clockwise: true,
  unwrap: (v: GameView | undefined) => (v?.game.case === "dos" ? v.game.value : undefined),
  hand: (g) => g.hand.split(" ").filter(Boolean).map((c) => ({ code: c, face: face(c) })),
  face,
  handSizes: (g) => g.handSizes,
  plan,
  label,
  outOfTurn: (m) => m === "dos" || m === "catch",
  seat: (g, seat) => {
    const note: SeatNote = { badges: [] };
    if (seat === g.dealer) note.badges!.push("Dealer");
    if (seat === g.dosWindow) note.badges!.push("Two cards, no “Dos”!");
    if (seat === g.current && g.drew) note.text = "drew a card";
    return note;
  },
  Centre: ({ g, target, onTarget }) => {
    const row = g.row.split(" ").filter(Boolean);
    const matched = new Set(g.matches.map((m) => m.rowIndex));
    return (
      <div class="centre-dos">
        <div class="info-label">Centre row: pick the card to match, then your card(s)</div>
        <div class="target-row" role="group" aria-label="centre row: pick the card to match">
          {row.map((c, i) => (
            <button type="button" key={`${c}-${i}`} class={`card target ${target === c ? "selected" : ""} ${matched.has(i) ? "matched" : ""}`}
              data-target={c} aria-pressed={target === c} aria-label={`centre card ${words(c)}`}
              onClick={() => onTarget(target === c ? undefined : c)}>
              <CardSvg face={face(c)} back={BACK} />
            </button>
          ))}
        </div>
        {g.matches.length > 0 && (
          <CentreLine label="Matched this turn">{g.matches.map((m) => `${m.cards.split("+").map(words).join(" + ")} on ${words(m.target)}`).join(" · ")}</CentreLine>
        )}
        {g.bonusOwed > 0 && <CentreLine label="Colour bonus">{`add ${g.bonusOwed} card${g.bonusOwed > 1 ? "s" : ""} to the row`}</CentreLine>}
        <CentreLine label="Draw pile">{`${g.drawPile} cards · ${g.discards.split(" ").filter(Boolean).length} discarded`}</CentreLine>
      </div>
    );
  },
  playLabel: () => "Play",
  hint: () => "Match a centre card: the same number with one card, or two cards adding up to it.",
  deals: (g) => g.history.length,
  summary: (g, deal, names) => {
    const h = g.history[deal];
    if (!h) return null;
    const scores = names.map((_, i) => (i === h.winner ? Number(h.points) : 0));
    return {
      title: `${names[h.winner]} wins round ${deal + 1}`,
      lines: [h.blocked ? `The round hit the turn limit: ${names[h.winner]} had the lowest hand.` : `${names[h.winner]} went out.`,
        ...names.map((n, i) => (i === h.winner ? "" : `${n}'s hand: ${h.handPoints[i] ?? 0} points`)).filter(Boolean),
        `${names[h.winner]} scores ${h.points} (1–10 face value, wild DOS 20, wild # 40).`],
      scores,
      scoreLabel: "points",
    };
  },
  sheet: (g, names) => sumSheet(names, g.history.map((h) => names.map((_, i) => (i === h.winner ? Number(h.points) : 0))), "Round"),
  finalLabel: "points (first to the target wins)",
  progress: (g) => `Round ${g.round + 1} · first to ${g.target} point${g.target === 1 ? "" : "s"}`,
  pickFirst: "a centre card",
  autoEnd: (legal) => {
    const turn = legal.filter((m) => m !== "dos" && m !== "catch");
    if (!turn.length || !turn.every((m) => m === "end" || m === "end dos")) return undefined;
    return turn.includes("end dos") ? "end dos" : "end"; // two cards left: call it while ending
  },
};
