// Dou Dizhu: ranks only (suits never matter, the engine keeps none), so the faces get suits
// in a fixed order per copy of a rank, for the eye alone.
import type { Face, FrenchRank, Suit } from "../cards/faces";
import { CardRow, CentreLine, Info } from "../table/bits";
import type { GameView } from "../gen/croupier/v1/croupier_pb";
import { DouDizhuPhase, type DouDizhuView } from "../gen/croupier/v1/dou_dizhu_pb";
import { sumSheet } from "./sheet";
import type { GameModule, HandCard, SeatNote } from "./types";

const ORDER = "3456789TJQKA2BR";
const COSMETIC_SUITS: Suit[] = ["s", "h", "c", "d"];

function rankFace(rank: string, copy: number): Face {
  if (rank === "B") return { kind: "joker", colour: "black" };
  if (rank === "R") return { kind: "joker", colour: "red" };
  const r = (rank === "T" ? "10" : rank) as FrenchRank;
  return { kind: "french", rank: r, suit: COSMETIC_SUITS[copy % 4] };
}

/** Codes with the copy of their rank ("8:1"), so that a row of shown cards gets its suits. */
function shown(ranks: string[]): string[] {
  return faces(ranks).map((c) => `${c.code}:${c.face.kind === "french" ? COSMETIC_SUITS.indexOf(c.face.suit) : 0}`);
}

/** The cards of a combination, highest first, as faces. */
function faces(ranks: string[]): HandCard[] {
  const seen: Record<string, number> = {};
  return [...ranks]
    .sort((a, b) => ORDER.indexOf(b) - ORDER.indexOf(a))
    .map((r) => ({ code: r, face: rankFace(r, (seen[r] = (seen[r] ?? -1) + 1)) }));
}

function ranksOf(move: string): string[] | null {
  if (move === "pass" || move.startsWith("bid")) return null;
  return [...move.replace("+", "")];
}

const RANK_WORD: Record<string, string> = { T: "10", B: "small joker", R: "big joker" };
const word = (r: string) => RANK_WORD[r] ?? r;

/** A combination in the words of the rulebook: "Airplane with single wings (333444555 + 6 7 8)". */
export function describe(move: string): string {
  const [main, kick = ""] = move.split("+");
  const counts = new Map<string, number>();
  for (const r of main) counts.set(r, (counts.get(r) ?? 0) + 1);
  const n = counts.size;
  const c = Math.max(...counts.values());
  const ranks = [...counts.keys()];
  const span = `${word(ranks[0])}–${word(ranks[n - 1])}`;
  const shown = kick ? `${[...main].map(word).join(" ")} + ${[...kick].map(word).join(" ")}` : [...main].map(word).join(" ");
  let kind: string;
  if (main === "BR") kind = "Rocket";
  else if (c === 1) kind = n === 1 ? `Single ${word(main)}` : `Straight ${span}`;
  else if (c === 2) kind = n === 1 ? `Pair of ${word(ranks[0])}s` : `Pairs ${span}`;
  else if (c === 3) {
    const base = n === 1 ? `Three ${word(ranks[0])}s` : `Airplane ${span}`;
    if (!kick) kind = base;
    else if (kick.length === n) kind = n === 1 ? `${base} with a single` : `${base} with single wings`;
    else kind = n === 1 ? `${base} with a pair` : `${base} with pair wings`;
  } else {
    if (!kick) kind = `Bomb of ${word(ranks[0])}s`;
    else kind = kick.length === 2 ? `Four ${word(ranks[0])}s with two singles` : `Four ${word(ranks[0])}s with two pairs`;
  }
  return `${kind} (${shown})`;
}

/** Index in `plays` where the current round of play began (after two passes in a row). */
function roundStart(g: DouDizhuView): number {
  let start = 0;
  for (let i = 1; i < g.plays.length; i++) {
    if (g.plays[i].move === "pass" && g.plays[i - 1].move === "pass") start = i + 1;
  }
  return start;
}

export const douDizhu: GameModule<DouDizhuView> = {
  name: "dou_dizhu",
  back: "french",
  clockwise: false,
  unwrap: (v: GameView | undefined) => (v?.game.case === "douDizhu" ? v.game.value : undefined),
  hand: (g) => faces([...g.hand]),
  face: (code) => rankFace(code[0], Number(code.split(":")[1] ?? 0)),
  handSizes: (g) => g.handSizes,
  plan: (move) => {
    const r = ranksOf(move);
    return r ? { cards: r } : null;
  },
  label: (move, g) => {
    if (move === "pass") return g.phase === DouDizhuPhase.BIDDING ? "No bid" : "Pass";
    if (move.startsWith("bid")) return `Bid ${move.slice(4)}`;
    return describe(move);
  },
  outOfTurn: () => false,
  seat: (g, seat) => {
    const note: SeatNote = { badges: [] };
    if (g.landlord >= 0) note.badges!.push(seat === g.landlord ? "Landlord" : "Farmer");
    if (g.phase === DouDizhuPhase.BIDDING) {
      const mine = g.bidding.filter((b) => b.seat === seat).pop();
      if (mine) note.text = mine.move === "pass" ? "No bid" : `Bid ${mine.move.slice(4)}`;
      if (seat === g.faceUpHolder) note.badges!.push("Face-up card");
    } else if (g.phase === DouDizhuPhase.PLAYING) {
      const last = g.plays.slice(roundStart(g)).filter((p) => p.seat === seat).pop();
      if (last) {
        if (last.move === "pass") note.text = "Pass";
        else note.played = shown(ranksOf(last.move) ?? []);
      }
    }
    return note;
  },
  Centre: ({ g, names }) => (
    <div class="centre-dou-dizhu">
      {g.phase === DouDizhuPhase.BIDDING ? (
        <CentreLine label="Bidding">
          {g.bid > 0 ? `highest bid ${g.bid} by ${names[g.bidding.filter((b) => b.move !== "pass").pop()?.seat ?? 0]}` : "nobody has bid yet"}
          {g.redeals > 0 ? ` · redeal ${g.redeals} of ${g.maxRedeals}` : ""}
        </CentreLine>
      ) : g.landlord >= 0 ? (
        <CentreLine label="Landlord">{`${names[g.landlord]} · bid ${g.bid}`}
          {` · bombs ${g.bombs} · stake ×${g.bid * 2 ** g.bombs}`}</CentreLine>
      ) : null}
      {g.faceUpCard && g.phase === DouDizhuPhase.BIDDING && (
        <Info label={`Face-up card (${names[g.faceUpHolder]})`}>
          <CardRow cards={[g.faceUpCard]} face={faceUp} back="french" small />
        </Info>
      )}
      <Info label="Kitty">
        {g.kitty ? <CardRow cards={shown([...g.kitty])} face={douDizhu.face} back="french" small />
          : <CardRow cards={["?", "?", "?"]} face={() => null} back="french" small />}
      </Info>
      {g.toBeat && (
        <CentreLine label="To beat">{`${describe(g.toBeat)} by ${names[g.toBeatSeat]}`}</CentreLine>
      )}
      {g.phase === DouDizhuPhase.PLAYING && !g.toBeat && <CentreLine label="Lead">any combination</CentreLine>}
    </div>
  ),
  playLabel: () => "Play",
  hint: (g) => (g.toBeat ? `Beat ${describe(g.toBeat)} with a higher one of the same kind, or a bomb; or pass.` : ""),
  deals: (g) => g.history.length,
  summary: (g, deal, names) => {
    const h = g.history[deal];
    if (!h) return null;
    const landlordWon = Number(h.scores[h.landlord]) > 0;
    const value = Math.abs(Number(h.scores[(h.landlord + 1) % 3]));
    const parts = [`bid ${h.bid}`];
    if (h.bombs) parts.push(`×${2 ** h.bombs} for ${h.bombs} bomb${h.bombs > 1 ? "s" : ""}/rocket`);
    if (h.spring) parts.push("×2 for the spring");
    return {
      title: landlordWon ? `${names[h.landlord]} (landlord) wins` : "The farmers win",
      lines: [`Landlord: ${names[h.landlord]}`, `Value: ${parts.join(" ")} = ${value}`,
        landlordWon ? `The landlord receives ${value} from each farmer.` : `The landlord pays ${value} to each farmer.`],
      scores: h.scores.map(Number),
      scoreLabel: "points",
    };
  },
  sheet: (g, names) => sumSheet(names, g.history.map((h) => h.scores.map(Number)), "Deal"),
  finalLabel: "points (bid × bombs × spring, per deal)",
  progress: (g) => `Deal ${Math.min(g.dealNumber + 1, g.deals)} of ${g.deals}`,
};

function faceUp(code: string): Face {
  if (code === "B" || code === "R") return rankFace(code, 0);
  const r = code.slice(0, -1);
  return { kind: "french", rank: (r === "T" ? "10" : r) as FrenchRank, suit: code.slice(-1) as Suit };
}

