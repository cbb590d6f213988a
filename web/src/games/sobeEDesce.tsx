// Sobe e Desce: trumps and the turned card, who plays or passes, exchanges as counts, the
// trick in front of the seats. The 40-card pack is French-suited, so the French faces serve.
import type { Face, FrenchRank, Suit } from "../cards/faces";
import { suitName, suitSymbol } from "../cards/faces";
import { CardRow, CentreLine } from "../table/bits";
import type { GameView } from "../gen/croupier/v1/croupier_pb";
import { SobeEDescePhase, type SobeEDesceView } from "../gen/croupier/v1/sobe_e_desce_pb";
import type { GameModule, SeatNote } from "./types";

const STRENGTH = "A7KJQ65432"; // strongest first
const face = (code: string): Face => ({ kind: "french", rank: code[0] as FrenchRank, suit: code[1] as Suit });
const short = (code: string) => `${code[0]}${suitSymbol(code[1] as Suit)}`;

function plan(m: string): { cards: string[] } | null {
  if (/^[23456QJK7A][cdhs]$/.test(m)) return { cards: [m] };
  if (m.startsWith("exchange ") && !/^exchange \d+ cards?$/.test(m)) return { cards: m.slice(9).split(" ") };
  return null;
}

function label(m: string): string {
  if (m.startsWith("trump ")) {
    const s = m.slice(6) as Suit;
    return `${suitName(s)[0].toUpperCase()}${suitName(s).slice(1)} ${suitSymbol(s)} as trumps`;
  }
  if (m === "turn") return "Turn my next card for trumps";
  if (m === "pass") return "Pass this deal";
  if (m === "play") return "Play, keeping my hand";
  if (/^exchange \d+ cards?$/.test(m)) return `Plays, exchanging ${m.split(" ")[1]} card(s)`;
  if (m.startsWith("exchange ")) return `Play, exchanging ${m.slice(9).split(" ").map(short).join(" ")}`;
  return short(m);
}

export const sobeEDesce: GameModule<SobeEDesceView> = {
  name: "sobe_e_desce",
  back: "french",
  clockwise: true,
  unwrap: (v: GameView | undefined) => (v?.game.case === "sobeEDesce" ? v.game.value : undefined),
  hand: (g) => {
    const suits = g.trump ? [g.trump, ..."cdhs".replace(g.trump, "")] : [..."cdhs"];
    return g.hand.split(" ").filter(Boolean)
      .sort((a, b) => suits.indexOf(a[1]) - suits.indexOf(b[1]) || STRENGTH.indexOf(a[0]) - STRENGTH.indexOf(b[0]))
      .map((c) => ({ code: c, face: face(c) }));
  },
  face,
  handSizes: (g) => g.handSizes,
  plan,
  label: (m) => label(m),
  outOfTurn: () => false,
  seat: (g, seat) => {
    const note: SeatNote = { badges: [] };
    if (seat === g.dealer) note.badges!.push("Dealer");
    if (seat === g.chooser) note.badges!.push("Chooser");
    if (g.mustPlay[seat] && g.phase === SobeEDescePhase.DECIDE) note.badges!.push("Must play");
    const d = g.decisions.find((x) => x.seat === seat);
    if (d) note.text = d.plays ? (d.exchanged ? `plays · exchanged ${d.exchanged}` : "plays") : "passes";
    const open = g.tricks[g.tricks.length - 1];
    if (open && g.phase === SobeEDescePhase.PLAY) {
      const i = open.cards.findIndex((_, k) => order(g, open.leader, k) === seat);
      if (i >= 0) note.played = [open.cards[i]];
    }
    if (g.phase === SobeEDescePhase.PLAY) note.text = `${note.text ? note.text + " · " : ""}${g.won[seat] ?? 0} tricks`;
    return note;
  },
  Centre: ({ g, names }) => (
    <div class="centre-sobe">
      <CentreLine label="Trumps">
        {g.trump ? <span class={`trump-suit suit-${g.trump}`}>{suitSymbol(g.trump as Suit)} {suitName(g.trump as Suit)}</span>
          : `${names[g.chooser] ?? "the chooser"} chooses`}
        {g.trump === "h" ? " (everybody plays)" : g.trump === "c" ? " (tricks count double)" : ""}
      </CentreLine>
      {g.turnedCard && <div class="info"><div class="info-label">Turned card ({names[g.chooser]} keeps it)</div>
        <CardRow cards={[g.turnedCard]} face={face} back="french" small /></div>}
      <CentreLine label="Chooser">{names[g.chooser] ?? "—"}</CentreLine>
      <CentreLine label="Stock">{`${g.stockSize} cards`}{g.discardCounts.some((n) => n > 0)
        ? ` · exchanged ${g.discardCounts.map((n, i) => `${names[i]} ${n}`).join(", ")}` : ""}</CentreLine>
      {g.discards && <CentreLine label="Your exchanged cards">{g.discards.split(" ").map(short).join(" ")}</CentreLine>}
    </div>
  ),
  playLabel: (g) => (g.phase === SobeEDescePhase.DECIDE ? "Exchange and play" : "Play"),
  hint: (g) => (g.phase === SobeEDescePhase.DECIDE ? "Pick the cards to give up, then exchange; or keep your hand or pass." :
    "Follow suit if you can; otherwise trump, over-trumping if you can."),
  deals: (g) => g.history.length,
  summary: (g, deal, names) => {
    const h = g.history[deal];
    if (!h) return null;
    const per = h.trump === "c" ? 2 : 1;
    return {
      title: `Deal ${deal + 1}: ${suitName(h.trump as Suit)} were trumps`,
      lines: names.map((n, i) => !h.played[i] ? `${n} passed: stays at ${h.scores[i]}`
        : h.tricks[i] > 0 ? `${n}: ${h.tricks[i]} trick${h.tricks[i] > 1 ? "s" : ""} × ${per} → down ${-h.change[i]} to ${h.scores[i]}`
        : `${n}: no trick → up ${h.change[i]} to ${h.scores[i]}`),
      scores: h.change,
      scoreLabel: "change of score (down is good)",
    };
  },
  sheet: (g, names) => ({
    header: ["Deal", ...names],
    rows: g.history.map((h, k) => [String(k + 1), ...h.scores.map(String)]),
    totals: g.settlement.length ? ["RISCOS", ...g.settlement.map(String)] : ["Now", ...g.scores.map(String)],
  }),
  seatScore: (g, seat) => String(g.scores[seat] ?? ""),
  finalLabel: "RISCOS (the winner receives what the others pay)",
  finalScore: (_g, total) => (total > 0 ? `+${total}` : String(total)),
  progress: (g) => `Deal ${g.dealNumber + 1} · from ${g.startScore} down to 0`,
};

/** The seat that played card k of a trick led by `leader`: play order skips the seats that passed. */
function order(g: SobeEDesceView, leader: number, k: number): number {
  const playing = g.decisions.filter((d) => d.plays).map((d) => d.seat);
  const seats = [0, 1, 2, 3].map((i) => (leader + i) % 4).filter((s) => s === leader || playing.includes(s) || g.chooser === s);
  return seats[k] ?? -1;
}
