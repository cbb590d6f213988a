// Dou Dizhu: ranks only in the engine; the faces get suits by the rule of douDizhu/suits.ts, so
// that no card shows twice. Combinations are named as the rulebook names them before they are
// played; a Hint cycles through the legal plays; the kitty's cards are marked in the
// landlord's hand.
import type { Face, FrenchRank, Suit } from "../cards/faces";
import { CardRow, CentreLine, Info } from "../table/bits";
import type { GameView } from "../gen/croupier/v1/croupier_pb";
import { DouDizhuPhase, type DouDizhuView } from "../gen/croupier/v1/dou_dizhu_pb";
import { t } from "../i18n";
import { contains } from "../table/select";
import { displaySuits, highFirst, shownCode, shownHands } from "./douDizhu/suits";
import { sumSheet } from "./sheet";
import type { GameModule, SeatNote } from "./types";

const ORDER = "3456789TJQKA2BR";

function rankFace(rank: string, suit: string): Face {
  if (rank === "B") return { kind: "joker", colour: "black" };
  if (rank === "R") return { kind: "joker", colour: "red" };
  const r = (rank === "T" ? "10" : rank) as FrenchRank;
  return { kind: "french", rank: r, suit: ((suit || "s") as Suit) };
}

const one = (r: string) => t(`games.dd.rank.${r}`);
const many = (r: string) => t(`games.dd.ranks.${r}`);

/** The shape of a rank multiset as a move in the notation ("888+3"), or null: no combination. */
export function shapeOf(ranks: string[]): string | null {
  const rs = [...ranks].sort((a, b) => ORDER.indexOf(a) - ORDER.indexOf(b));
  const n = rs.length;
  if (!n) return null;
  const counts = new Map<string, number>();
  for (const r of rs) counts.set(r, (counts.get(r) ?? 0) + 1);
  const keys = [...counts.keys()];
  const run = (ks: string[]) => ks.every((k, i) => i === 0 || ORDER.indexOf(k) === ORDER.indexOf(ks[i - 1]) + 1)
    && ks.every((k) => ORDER.indexOf(k) <= ORDER.indexOf("A"));
  if (n === 2 && counts.get("B") === 1 && counts.get("R") === 1) return "BR";
  if (keys.length === 1 && n <= 4 && !(n > 1 && (keys[0] === "B" || keys[0] === "R"))) return rs.join("");
  const vals = [...counts.values()];
  if (vals.every((c) => c === 1) && n >= 5 && run(keys)) return rs.join("");
  if (vals.every((c) => c === 2) && keys.length >= 3 && run(keys)) return rs.join("");
  // triples (with or without wings)
  const triples = keys.filter((k) => (counts.get(k) ?? 0) >= 3 && ORDER.indexOf(k) <= ORDER.indexOf("2"));
  for (let len = triples.length; len >= 1; len--) {
    for (let s = 0; s + len <= triples.length; s++) {
      const main = triples.slice(s, s + len);
      if (len > 1 && !run(main)) continue;
      const rest = removeOnce(rs, main.flatMap((k) => [k, k, k]));
      const mainText = main.map((k) => k.repeat(3)).join("");
      if (!rest.length) return mainText;
      const restCounts = new Map<string, number>();
      for (const r of rest) restCounts.set(r, (restCounts.get(r) ?? 0) + 1);
      if (rest.length === len && !(restCounts.has("B") && restCounts.has("R"))) return `${mainText}+${rest.join("")}`;
      if (rest.length === 2 * len && [...restCounts.values()].every((c) => c === 2) && restCounts.size === len
        && !restCounts.has("B") && !restCounts.has("R")) return `${mainText}+${rest.join("")}`;
    }
  }
  const four = keys.find((k) => counts.get(k) === 4);
  if (four) {
    const rest = rs.filter((r) => r !== four);
    if (rest.length === 2 && !(rest.includes("B") && rest.includes("R"))) return `${four.repeat(4)}+${rest.join("")}`;
    if (rest.length === 4 && rest[0] === rest[1] && rest[2] === rest[3] && rest[0] !== rest[2]) return `${four.repeat(4)}+${rest.join("")}`;
  }
  return null;
}

function removeOnce(list: string[], items: string[]): string[] {
  const left = [...list];
  for (const x of items) {
    const i = left.indexOf(x);
    if (i >= 0) left.splice(i, 1);
  }
  return left;
}

/** The kind of a combination, in words: "Airplane with single wings", "Bomb of four 5s". */
export function kindOf(move: string): string {
  const [main, kick = ""] = move.split("+");
  const counts = new Map<string, number>();
  for (const r of main) counts.set(r, (counts.get(r) ?? 0) + 1);
  const n = counts.size;
  const c = Math.max(...counts.values());
  const ranks = [...counts.keys()];
  const from = one(ranks[0]);
  const to = one(ranks[n - 1]);
  if (main === "BR") return t("games.dd.kind.rocket");
  if (c === 1) return n === 1 ? t("games.dd.kind.single", { rank: one(main) }) : t("games.dd.kind.straight", { n, from, to });
  if (c === 2) return n === 1 ? t("games.dd.kind.pair", { ranks: many(ranks[0]) }) : t("games.dd.kind.pairs", { n, from, to });
  if (c === 3) {
    if (n === 1) {
      if (!kick) return t("games.dd.kind.trio", { ranks: many(ranks[0]) });
      return t(kick.length === 1 ? "games.dd.kind.trioSingle" : "games.dd.kind.trioPair", { ranks: many(ranks[0]) });
    }
    if (!kick) return t("games.dd.kind.airplane", { from, to });
    return t(kick.length === n ? "games.dd.kind.airplaneSingles" : "games.dd.kind.airplanePairs", { from, to });
  }
  if (!kick) return t("games.dd.kind.bomb", { ranks: many(ranks[0]) });
  return t(kick.length === 2 ? "games.dd.kind.fourSingles" : "games.dd.kind.fourPairs", { ranks: many(ranks[0]) });
}

/** A combination with its cards: "Airplane with single wings (3 3 3 4 4 4 + 6 8)". */
export function describe(move: string): string {
  const [main, kick = ""] = move.split("+");
  if (!kick && (new Set(main).size === 1 || main === "BR")) return kindOf(move); // the kind says it all
  const cards = [...main].map(one).join(" ") + (kick ? ` + ${[...kick].map(one).join(" ")}` : "");
  return t("games.dd.withCards", { kind: kindOf(move), cards });
}

const isBomb = (m: string) => m === "BR" || /^(.)\1\1\1$/.test(m);

/** Index in `plays` where the current round of play began (after two passes in a row). */
function roundStart(g: DouDizhuView): number {
  let start = 0;
  for (let i = 1; i < g.plays.length; i++) {
    if (g.plays[i].move === "pass" && g.plays[i - 1].move === "pass") start = i + 1;
  }
  return start;
}

function explain(picked: string[], legal: string[], g: DouDizhuView): string | undefined {
  const shape = shapeOf(picked);
  const plays = legal.filter((m) => m !== "pass" && !m.startsWith("bid"));
  if (shape && g.toBeat) return t("games.dd.doesNotBeat", { mine: kindOf(shape), theirs: kindOf(g.toBeat) });
  const longer = plays.filter((m) => contains([...m.replace("+", "")], picked))
    .sort((a, b) => a.length - b.length);
  if (longer.length) {
    const m = longer[0];
    const more = m.replace("+", "").length - picked.length;
    const extra = removeOnce([...m.replace("+", "")], picked);
    if (extra.every((r) => picked.includes(r)) && new Set(extra).size === 1) {
      return t("games.dd.pickMoreSame", { n: more, kind: kindOf(m) });
    }
    return t("games.dd.pickMore", { n: more, kind: kindOf(m) });
  }
  return t("games.dd.noCombination");
}

/** The Hint's order: the lowest plays first, bombs and the rocket last. */
function hints(legal: string[]): string[] {
  const plays = legal.filter((m) => m !== "pass" && !m.startsWith("bid"));
  const low = (m: string) => ORDER.indexOf(m[0]);
  return plays.sort((a, b) => Number(isBomb(a)) - Number(isBomb(b)) || low(a) - low(b) || a.length - b.length);
}

const face = (code: string): Face => rankFace(code[0], code.slice(1));

export const douDizhu: GameModule<DouDizhuView> = {
  name: "dou_dizhu",
  back: "french",
  clockwise: false,
  unwrap: (v: GameView | undefined) => (v?.game.case === "douDizhu" ? v.game.value : undefined),
  hand: (g) => displaySuits(g).hand.map((c) => ({ code: c.rank, face: rankFace(c.rank, c.suit), mark: c.kitty ? "kitty" : undefined })),
  face,
  // the plays stay in front of their seats until each seat plays again (the module's notes),
  // drawn with the suits of the table as it is now: no play is swept away with the suits of a
  // moment before, which could show a card twice
  closedPlay: () => null,
  handSizes: (g) => g.handSizes,
  plan: (move) => (move === "pass" || move.startsWith("bid") ? null : { cards: highFirst([...move.replace("+", "")]) }),
  label: (move, g) => {
    if (move === "pass") return g.phase === DouDizhuPhase.BIDDING ? t("games.dd.noBid") : t("games.dd.pass");
    if (move.startsWith("bid")) return t("games.dd.bid", { n: Number(move.slice(4)) });
    return describe(move);
  },
  outOfTurn: () => false,
  seat: (g, seat) => {
    const note: SeatNote = { badges: [] };
    if (g.landlord >= 0) note.badges!.push(seat === g.landlord ? t("games.dd.landlord") : t("games.dd.farmer"));
    if (g.phase === DouDizhuPhase.BIDDING) {
      const mine = g.bidding.filter((b) => b.seat === seat).pop();
      if (mine) note.text = mine.move === "pass" ? t("games.dd.noBid") : t("games.dd.bid", { n: Number(mine.move.slice(4)) });
      if (seat === g.faceUpHolder) note.badges!.push(t("games.dd.faceUpBadge"));
    } else if (g.phase === DouDizhuPhase.PLAYING) {
      const start = roundStart(g);
      let last = -1;
      for (let i = g.plays.length - 1; i >= start; i--) if (g.plays[i].seat === seat) { last = i; break; }
      if (last >= 0) {
        if (g.plays[last].move === "pass") note.text = t("games.dd.pass");
        else note.played = displaySuits(g).plays[last].map(shownCode);
      }
    }
    return note;
  },
  Centre: ({ g, names }) => (
    <div class="centre-dou-dizhu">
      {g.phase === DouDizhuPhase.BIDDING ? (
        <CentreLine label={t("games.dd.bidding")}>
          {g.bid > 0 ? t("games.dd.highestBid", { n: g.bid, name: names[g.bidding.filter((b) => b.move !== "pass").pop()?.seat ?? 0] })
            : t("games.dd.nobodyBid")}
          {g.redeals > 0 ? ` · ${t("games.dd.redeal", { n: g.redeals, max: g.maxRedeals })}` : ""}
        </CentreLine>
      ) : g.landlord >= 0 ? (
        <CentreLine label={t("games.dd.landlord")}>
          {t("games.dd.stakeLine", { name: names[g.landlord], bid: g.bid, bombs: g.bombs, stake: g.bid * 2 ** g.bombs })}
        </CentreLine>
      ) : null}
      {g.faceUpCard && g.phase === DouDizhuPhase.BIDDING && (
        <Info label={t("games.dd.faceUp", { name: names[g.faceUpHolder] })}>
          <CardRow cards={[g.faceUpCard.length > 1 ? g.faceUpCard : g.faceUpCard]} face={face} back="french" small cls="face-up" />
        </Info>
      )}
      <Info label={t("games.dd.kitty")}>
        {g.kitty ? <CardRow cards={displaySuits(g).kitty.map(shownCode)} face={face} back="french" small cls="kitty" />
          : <CardRow cards={["?", "?", "?"]} face={() => null} back="french" small cls="kitty" />}
      </Info>
      {g.toBeat && (
        <CentreLine label={t("games.dd.toBeat")}>{t("games.dd.toBeatBy", { what: describe(g.toBeat), name: names[g.toBeatSeat] })}</CentreLine>
      )}
      {g.phase === DouDizhuPhase.PLAYING && !g.toBeat && <CentreLine label={t("games.dd.lead")}>{t("games.dd.anyCombination")}</CentreLine>}
    </div>
  ),
  playLabel: () => t("games.play"),
  hint: (g) => (g.toBeat ? t("games.dd.hintBeat", { what: kindOf(g.toBeat) }) : ""),
  explain,
  hints: (legal) => hints(legal),
  playing: (g) => g.phase === DouDizhuPhase.PLAYING,
  lastPlay: (g) => {
    const i = g.plays.length - 1;
    if (i < 0 || g.plays[i].move === "pass") return undefined;
    return { seat: g.plays[i].seat, cards: displaySuits(g).plays[i].map(shownCode) };
  },
  deals: (g) => g.history.length,
  summary: (g, deal, names) => {
    const h = g.history[deal];
    if (!h) return null;
    const landlordWon = Number(h.scores[h.landlord]) > 0;
    const value = Math.abs(Number(h.scores[(h.landlord + 1) % 3]));
    const lines = [t("games.dd.sumLandlord", { name: names[h.landlord], bid: h.bid }),
      t("games.dd.sumBombs", { n: h.bombs, factor: 2 ** h.bombs }),
      h.spring ? t("games.dd.sumSpring") : t("games.dd.sumNoSpring"),
      t("games.dd.sumValue", { bid: h.bid, bombs: 2 ** h.bombs, spring: h.spring ? 2 : 1, value }),
      landlordWon ? t("games.dd.sumLandlordWins", { value }) : t("games.dd.sumFarmersWin", { value })];
    return {
      title: landlordWon ? t("games.dd.titleLandlord", { name: names[h.landlord] }) : t("games.dd.titleFarmers"),
      lines,
      scores: h.scores.map(Number),
      scoreLabel: t("games.points"),
      hands: shownHands(h.hands).map((cards, seat) => ({ seat, cards: cards.map(shownCode) })).filter((x) => x.cards.length),
    };
  },
  sheet: (g, names) => sumSheet(names, g.history.map((h) => h.scores.map(Number)), t("games.deal")),
  get finalLabel() {
    return t("games.dd.finalLabel");
  },
  progress: (g) => t("games.dealOf", { n: Math.min(g.dealNumber + 1, g.deals), of: g.deals }),
};
