// Dobro: the auction pile and the value in play in the centre, the direction of play, every
// seat's score pile as a count, the Oubli card where it is.
import type { JSX } from "preact";
import { t } from "../i18n";
import { Legend } from "./legend";
import type { Back, Face } from "../cards/faces";
import { H, W } from "../cards/Card";
import { CardRow, CentreLine, Info } from "../table/bits";
import type { GameView } from "../gen/croupier/v1/croupier_pb";
import type { DobroAction, DobroView } from "../gen/croupier/v1/dobro_pb";
import { sumSheet } from "./sheet";
import type { GameModule, SeatNote } from "./types";

// Dobro cards, which no package draws: a number 2-12, or the joker, skip and reverse
const BACK: Back = { fill: "#7a2e12", word: "DOBRO" };

// Dobro's numbers by band, so that a hand reads at a glance; the specials stand apart
const DOBRO_FILL = (v: string): string =>
  v === "J" ? "#6a1b9a" : v === "S" ? "#37474f" : v === "R" ? "#00695c"
    : Number(v) <= 4 ? "#1565c0" : Number(v) <= 8 ? "#2e7d32" : "#c62828";

function DobroFace({ f }: { f: { value: string } }): JSX.Element {
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

const words = (v: string): string =>
  v === "J" ? t("games.dobro.joker") : v === "S" ? t("games.dobro.skip") : v === "R" ? t("games.dobro.reverse")
    : t("games.dobro.value", { v });

const face = (code: string): Face => ({ kind: "drawn", label: words(code), draw: () => <DobroFace f={{ value: code }} /> });
const ORDER = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "J", "S", "R"];

/** The hand cards a move plays: "66" two 6s, "J:10" a joker, "skip" the skip card. */
export function dobroCards(m: string): string[] | null {
  if (m === "skip") return ["S"];
  if (m === "reverse") return ["R"];
  if (m.startsWith("JJ:")) return ["J", "J"];
  if (m.startsWith("J:")) return ["J"];
  if (m.startsWith("J+")) return ["J", m.slice(2)];
  if (/^\d+$/.test(m)) {
    const v = Number(m);
    if (v >= 2 && v <= 12) return [m];
    const half = m.slice(0, m.length / 2);
    return [half, half];
  }
  return null;
}

function label(m: string, names: string[]): string {
  if (m === "pass") return t("games.dobro.move.pass");
  if (m === "draw") return t("games.dobro.move.draw");
  if (m === "end") return t("games.dobro.move.end");
  if (m.startsWith("call ")) return t("games.dobro.move.call", { name: names[Number(m.slice(5))] ?? m.slice(5) });
  if (m === "skip") return t("games.dobro.move.skip");
  if (m === "reverse") return t("games.dobro.move.reverse");
  if (m.startsWith("JJ:")) return t("games.dobro.move.twoJokers", { v: Number(m.slice(3)), sum: 2 * Number(m.slice(3)) });
  if (m.startsWith("J:")) return t("games.dobro.move.joker", { v: Number(m.slice(2)) });
  if (m.startsWith("J+")) return t("games.dobro.move.jokerPair", { v: Number(m.slice(2)), sum: 2 * Number(m.slice(2)) });
  const cards = dobroCards(m);
  if (cards && cards.length === 2) return t("games.dobro.move.pair", { v: Number(cards[0]), sum: 2 * Number(cards[0]) });
  return t("games.dobro.move.single", { v: Number(m) });
}

/** What the last move says aloud, in the player's language, from the move's own fields (the
 * server's `announcement` is its English text for logs and terminals). */
export function announce(last: DobroAction | undefined, names: string[]): string {
  if (!last || last.seat < 0) return "";
  const m = last.move;
  const v = last.value;
  const name = names[last.seat] ?? "";
  let text: string;
  if (m === "pass") text = t("games.dobro.say.pass", { name, n: last.cards });
  else if (m === "skip") text = t("games.dobro.say.skip", { name, v });
  else if (m === "reverse") text = t("games.dobro.say.reverse", { name, v });
  else if (m === "draw") text = t("games.dobro.say.draw", { name, n: last.cards });
  else if (m === "end") text = last.cards ? t("games.dobro.say.forgot", { name, n: last.cards }) : t("games.dobro.say.end", { name });
  else if (m.startsWith("call ")) {
    text = t("games.dobro.say.call", { name, other: names[Number(m.slice(5))] ?? m.slice(5), n: last.cards });
  } else {
    const what = m.startsWith("JJ:") ? t("games.dobro.say.twoJokers", { name, v: Number(m.slice(3)) })
      : m.startsWith("J:") ? t("games.dobro.say.joker", { name, v: Number(m.slice(2)) })
        : m.startsWith("J+") ? t("games.dobro.say.jokerPair", { name, v: Number(m.slice(2)) }) : t("games.dobro.say.plain", { name });
    text = `${what} ${last.dobro ? t("games.dobro.say.dobro", { v }) : t("games.dobro.say.value", { v })}`;
  }
  return last.endedRound ? `${text} ${t("games.dobro.say.roundOver")}` : text;
}

export const dobro: GameModule<DobroView> = {
  name: "dobro",
  back: BACK,
  clockwise: true,
  unwrap: (v: GameView | undefined) => (v?.game.case === "dobro" ? v.game.value : undefined),
  hand: (g) => g.hand.split(" ").filter(Boolean).sort((a, b) => ORDER.indexOf(a) - ORDER.indexOf(b))
    .map((c) => ({ code: c, face: face(c) })),
  face,
  handSizes: (g) => g.handSizes,
  plan: (m) => {
    const c = dobroCards(m);
    return c ? { cards: c } : null;
  },
  label: (m, _g, names) => label(m, names),
  outOfTurn: (m) => m.startsWith("call "),
  seat: (g, seat) => {
    const note: SeatNote = { badges: [] };
    if (g.oubli === seat) note.badges!.push(t("games.dobro.oubliBadge"));
    if (g.forgetters.includes(seat)) note.badges!.push(t("games.dobro.forgot"));
    if (seat === g.roundOpener) note.badges!.push(t("games.dobro.opened"));
    const mine = g.auction.filter((a) => a.seat === seat).pop();
    if (mine) {
      const cards = dobroCards(mine.move);
      if (cards) note.played = cards;
      else note.text = label(mine.move, []);
    }
    const pile = (g.collected[seat] ?? "").split(" ").filter(Boolean).length;
    note.text = `${note.text ? note.text + " · " : ""}${t("games.dobro.collected", { n: pile })}`;
    return note;
  },
  Centre: ({ g, names }) => (
    <div class="centre-dobro">
      <div class="big-value" aria-label={t("games.dobro.valueAria", { v: g.value })}>
        <span class="big-number">{g.value || "—"}</span>
        <span class="big-caption">{t("games.dobro.valueCaption")} · {g.direction > 0 ? t("games.dobro.clockwise") : t("games.dobro.reversed")}</span>
      </div>
      <Info label={t("games.dobro.auction")}>
        {g.auctionCards ? <CardRow cards={g.auctionCards.split(" ")} face={face} back={BACK} small cls="auction" />
          : <span class="muted">{t("games.dobro.emptyAuction", { name: g.turn >= 0 ? names[g.turn] : "—" })}</span>}
      </Info>
      {g.last && g.last.seat >= 0 && <div class="announcement" role="status">{announce(g.last, names)}</div>}
      <CentreLine label={t("games.dobro.drawPile")}>{t("games.dobro.pileLine", { n: g.drawPile, aside: g.setAside })}
        {g.manualDraw ? ` · ${t("games.dobro.oubliWhere", { name: g.oubli >= 0 ? names[g.oubli] : "" , centre: g.oubli >= 0 ? "no" : "yes" })}` : ""}</CentreLine>
      <Legend words={[{ word: t("games.dobro.dobroWord"), text: t("games.dobro.dobroExplained") },
        ...(g.manualDraw ? [{ word: t("games.dobro.oubliWord"), text: t("games.dobro.oubliExplained") }] : [])]} />
    </div>
  ),
  playLabel: () => t("games.play"),
  hint: (g) => (g.value ? t("games.dobro.hint", { v: g.value }) : ""),
  playing: () => true,
  chooseText: () => t("games.dobro.jokerAs"),
  choiceLabel: (m) => (m.startsWith("JJ:") ? t("games.dobro.choiceTwo", { v: Number(m.slice(3)) })
    : m.startsWith("J:") ? m.slice(2) : label(m, [])),
  deals: (g) => g.history.length,
  summary: (g, deal, names) => {
    const h = g.history[deal];
    if (!h) return null;
    const ranking = names.map((n, i) => ({ n, c: h.collected[i], p: h.points[i] })).sort((a, b) => a.p - b.p);
    return {
      title: t("games.dobro.sumTitle", { n: deal + 1 }),
      lines: [t("games.dobro.sumEnder", { name: names[h.ender] }),
        ...ranking.map((r) => t("games.dobro.sumLine", { name: r.n, c: r.c, p: r.p })),
        h.oubli >= 0 ? t("games.dobro.sumOubli", { name: names[h.oubli] }) : t("games.dobro.sumNoOubli"),
        t("games.dobro.sumRule")],
      scores: h.points,
      scoreLabel: t("games.dobro.penalty"),
    };
  },
  sheet: (g, names) => sumSheet(names, g.history.map((h) => h.points), t("games.round")),
  // Result.totals are the penalty points negated (higher is better for every client)
  seatScore: (g, seat) => t("games.dobro.seatScore", { n: Number(g.totals[seat] ?? 0) }),
  get finalLabel() {
    return t("games.dobro.finalLabel");
  },
  finalScore: (_g, total) => String(-total),
  progress: (g) => t("games.dobro.progress", { n: Math.min(g.round + 1, g.rounds), of: g.rounds }),
};
