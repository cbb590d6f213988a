// Sobe e Desce: trumps and the turned card, who plays or passes, exchanges as counts, the
// trick in front of the seats. The 40-card pack is French-suited, so the French faces serve.
import type { Face, FrenchRank, Suit } from "../cards/faces";
import { suitSymbol } from "../cards/faces";
import { CardRow, CentreLine } from "../table/bits";
import type { GameView } from "../gen/croupier/v1/croupier_pb";
import { SobeEDescePhase, type SobeEDesceView } from "../gen/croupier/v1/sobe_e_desce_pb";
import { t } from "../i18n";
import { Legend } from "./legend";
import type { GameModule, SeatNote } from "./types";

const STRENGTH = "A7KJQ65432"; // strongest first
const face = (code: string): Face => ({ kind: "french", rank: code[0] as FrenchRank, suit: code[1] as Suit });
const short = (code: string) => `${code[0]}${suitSymbol(code[1] as Suit)}`;

function plan(m: string): { cards: string[] } | null {
  if (/^[23456QJK7A][cdhs]$/.test(m)) return { cards: [m] };
  if (m.startsWith("exchange ") && !/^exchange \d+ cards?$/.test(m)) return { cards: m.slice(9).split(" ") };
  return null;
}

const suitWord = (s: string) => t(`games.sd.suit.${s}`);

function label(m: string): string {
  if (m.startsWith("trump ")) return t("games.sd.move.trump", { suit: suitWord(m.slice(6)), symbol: suitSymbol(m.slice(6) as Suit) });
  if (m === "turn") return t("games.sd.move.turn");
  if (m === "pass") return t("games.sd.move.pass");
  if (m === "play") return t("games.sd.move.play");
  if (/^exchange \d+ cards?$/.test(m)) return t("games.sd.move.exchangedN", { n: Number(m.split(" ")[1]) });
  if (m.startsWith("exchange ")) return t("games.sd.move.exchange", { cards: m.slice(9).split(" ").map(short).join(" ") });
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
    if (seat === g.dealer) note.badges!.push(t("games.dealer"));
    if (seat === g.chooser) note.badges!.push(t("games.sd.chooser"));
    if (g.mustPlay[seat] && g.phase === SobeEDescePhase.DECIDE) note.badges!.push(t("games.sd.mustPlay"));
    const d = g.decisions.find((x) => x.seat === seat);
    if (d) note.text = d.plays ? (d.exchanged ? t("games.sd.playsExchanged", { n: d.exchanged }) : t("games.sd.plays")) : t("games.sd.passes");
    const open = g.tricks[g.tricks.length - 1];
    if (open && g.phase === SobeEDescePhase.PLAY) {
      const i = open.cards.findIndex((_, k) => order(g, open.leader, k) === seat);
      if (i >= 0) note.played = [open.cards[i]];
    }
    if (g.phase === SobeEDescePhase.PLAY) note.text = `${note.text ? note.text + " · " : ""}${t("games.sd.tricksWon", { n: g.won[seat] ?? 0 })}`;
    return note;
  },
  Centre: ({ g, names }) => (
    <div class="centre-sobe">
      <CentreLine label={t("games.sd.trumps")}>
        {g.trump ? <span class={`trump-suit suit-${g.trump}`}>{suitSymbol(g.trump as Suit)} {suitWord(g.trump)}</span>
          : t("games.sd.chooses", { name: names[g.chooser] ?? "—" })}
        {g.trump === "h" ? ` ${t("games.sd.heartsNote")}` : g.trump === "c" ? ` ${t("games.sd.clubsNote")}` : ""}
      </CentreLine>
      {g.turnedCard && <div class="info"><div class="info-label">{t("games.sd.turned", { name: names[g.chooser] })}</div>
        <CardRow cards={[g.turnedCard]} face={face} back="french" small /></div>}
      <CentreLine label={t("games.sd.chooser")}>{names[g.chooser] ?? "—"}</CentreLine>
      <CentreLine label={t("games.sd.stock")}>{t("games.cardsN", { n: g.stockSize })}{g.discardCounts.some((n) => n > 0)
        ? ` · ${t("games.sd.exchangedBy", { list: g.discardCounts.map((n, i) => `${names[i]} ${n}`).join(", ") })}` : ""}</CentreLine>
      {g.discards && <CentreLine label={t("games.sd.yourExchanged")}>{g.discards.split(" ").map(short).join(" ")}</CentreLine>}
      <Legend words={[{ word: t("games.sd.goal"), text: t("games.sd.goalExplained", { start: g.startScore }) },
        { word: t("games.sd.riscos"), text: t("games.sd.riscosExplained") }]} />
    </div>
  ),
  playLabel: (g) => (g.phase === SobeEDescePhase.DECIDE ? t("games.sd.exchangePlay") : t("games.play")),
  hint: (g) => (g.phase === SobeEDescePhase.DECIDE ? t("games.sd.hintDecide") : t("games.sd.hintPlay")),
  playing: (g) => g.phase === SobeEDescePhase.PLAY,
  deals: (g) => g.history.length,
  summary: (g, deal, names) => {
    const h = g.history[deal];
    if (!h) return null;
    const per = h.trump === "c" ? 2 : 1;
    const lines = names.map((n, i) => !h.played[i] ? t("games.sd.sumPassed", { name: n, score: h.scores[i] })
      : h.tricks[i] > 0 ? t("games.sd.sumTricks", { name: n, n: h.tricks[i], per, down: -h.change[i], score: h.scores[i] })
      : t("games.sd.sumNoTrick", { name: n, up: h.change[i], score: h.scores[i] }));
    lines.push(t("games.sd.sumRule", { per, up: 5 * per }));
    if (g.settlement.length && deal === g.history.length - 1) {
      lines.push(t("games.sd.riscosExplained"));
      lines.push(...names.map((n, i) => t("games.sd.settle", { name: n, n: Number(g.settlement[i] ?? 0) > 0 ? `+${g.settlement[i]}` : String(g.settlement[i] ?? 0) })));
    }
    return {
      title: t("games.sd.sumTitle", { n: deal + 1, suit: suitWord(h.trump) }),
      lines,
      scores: h.change,
      scoreLabel: t("games.sd.changeLabel"),
    };
  },
  sheet: (g, names) => ({
    header: [t("games.deal"), ...names],
    rows: g.history.map((h, k) => [String(k + 1), ...h.scores.map(String)]),
    totals: g.settlement.length ? [t("games.sd.riscos"), ...g.settlement.map(String)] : [t("games.sd.now"), ...g.scores.map(String)],
  }),
  seatScore: (g, seat) => String(g.scores[seat] ?? ""),
  get finalLabel() {
    return t("games.sd.finalLabel");
  },
  finalScore: (_g, total) => (total > 0 ? `+${total}` : String(total)),
  progress: (g) => t("games.sd.progress", { n: g.dealNumber + 1, start: g.startScore }),
};

/** The seat that played card k of a trick led by `leader`: play order skips the seats that passed. */
function order(g: SobeEDesceView, leader: number, k: number): number {
  const playing = g.decisions.filter((d) => d.plays).map((d) => d.seat);
  const seats = [0, 1, 2, 3].map((i) => (leader + i) % 4).filter((s) => s === leader || playing.includes(s) || g.chooser === s);
  return seats[k] ?? -1;
}
