// Dou Dizhu's engine keeps ranks only (suits never matter in its rules); only the face-up card
// has a real suit. The faces need suits, and a card must never show twice on one screen, so
// the suits are handed out over everything the seat sees, in the order it saw it:
//   1. the face-up card keeps its real suit;
//   2. the seat's own 17 cards (its hand and what it played, less the kitty's cards) take the
//      free suits of their rank in the order spades, hearts, clubs, diamonds;
//   3. the kitty's three cards take the next free suits;
//   4. each card another seat plays, in the order of play, is its face-up card or one of its
//      kitty cards where it holds one of that rank, else the next free suit.
// The seat's own plays take its own copies of the rank, first to last; the hand keeps the rest.
// The rule is documented in web/README.md.
import type { Suit } from "../../cards/faces";
import type { DouDizhuView } from "../../gen/croupier/v1/dou_dizhu_pb";

const ORDER = "3456789TJQKA2BR";
const SUITS: Suit[] = ["s", "h", "c", "d"];

export interface ShownCard { rank: string; suit: Suit | ""; kitty?: boolean }
export interface DisplaySuits {
  hand: ShownCard[];        // the seat's hand, highest first
  kitty: ShownCard[];       // the kitty, highest first
  plays: ShownCard[][];     // per entry of g.plays, highest first (empty for a pass)
}

/** Ranks, highest first. */
export function highFirst(ranks: string[]): string[] {
  return [...ranks].sort((a, b) => ORDER.indexOf(b) - ORDER.indexOf(a));
}

export function playRanks(move: string): string[] {
  if (move === "pass" || move.startsWith("bid")) return [];
  return highFirst([...move.replace("+", "")]);
}

function removeOnce(list: string[], items: string[]): string[] {
  const left = [...list];
  for (const x of items) {
    const i = left.indexOf(x);
    if (i >= 0) left.splice(i, 1);
  }
  return left;
}

const memo = new WeakMap<DouDizhuView, DisplaySuits>();

export function displaySuits(g: DouDizhuView): DisplaySuits {
  const known = memo.get(g);
  if (known) return known;
  const used = new Map<string, Set<Suit | "">>();
  const take = (rank: string): Suit | "" => {
    if (rank === "B" || rank === "R") return "";
    const u = used.get(rank) ?? new Set();
    used.set(rank, u);
    const s = SUITS.find((x) => !u.has(x)) ?? "s";
    u.add(s);
    return s;
  };
  const reserve = (rank: string, s: Suit) => {
    const u = used.get(rank) ?? new Set();
    u.add(s);
    used.set(rank, u);
  };
  const me = g.seat;
  const kittyRanks = highFirst([...g.kitty]);
  const faceUpRank = g.faceUpCard ? g.faceUpCard[0] : "";
  const faceUpSuit = g.faceUpCard && g.faceUpCard.length > 1 ? (g.faceUpCard.slice(-1) as Suit) : undefined;
  if (faceUpSuit) reserve(faceUpRank, faceUpSuit);

  // 2. the seat's own cards: per rank, the copies it holds or held, in suit order
  const mine = new Map<string, ShownCard[]>();
  if (me >= 0) {
    const handRanks = [...g.hand];
    const played = [...(g.played[me] ?? "")];
    let own = [...handRanks, ...played];
    if (g.landlord === me && kittyRanks.length) own = removeOnce(own, kittyRanks);
    let faceUpLeft = me === g.faceUpHolder && !!faceUpSuit;
    for (const r of highFirst(own)) {
      let suit: Suit | "";
      if (faceUpLeft && r === faceUpRank) {
        suit = faceUpSuit!;
        faceUpLeft = false;
      } else suit = take(r);
      const list = mine.get(r) ?? [];
      list.push({ rank: r, suit });
      mine.set(r, list);
    }
  }
  // 3. the kitty
  const kitty = kittyRanks.map((r) => ({ rank: r, suit: take(r), kitty: true }));
  if (me >= 0 && g.landlord === me) {
    for (const k of kitty) {
      const list = mine.get(k.rank) ?? [];
      list.push({ ...k });
      mine.set(k.rank, list);
    }
  }
  // what other seats are known to hold: the face-up card, the landlord's kitty cards
  const knownTo = new Map<number, ShownCard[]>();
  if (faceUpSuit && g.faceUpHolder !== me && g.faceUpHolder >= 0) {
    knownTo.set(g.faceUpHolder, [{ rank: faceUpRank, suit: faceUpSuit }]);
  }
  if (g.landlord >= 0 && g.landlord !== me) {
    knownTo.set(g.landlord, [...(knownTo.get(g.landlord) ?? []), ...kitty.map((k) => ({ rank: k.rank, suit: k.suit }))]);
  }
  // 4. the plays, in order
  const plays = g.plays.map((p) => playRanks(p.move).map((r): ShownCard => {
    if (p.seat === me) {
      const list = mine.get(r) ?? [];
      return list.shift() ?? { rank: r, suit: take(r) };
    }
    const held = knownTo.get(p.seat) ?? [];
    const i = held.findIndex((c) => c.rank === r);
    if (i >= 0) return held.splice(i, 1)[0];
    return { rank: r, suit: take(r) };
  }));
  const hand = highFirst([...g.hand]).map((r) => {
    const list = mine.get(r) ?? [];
    return list.shift() ?? { rank: r, suit: take(r) };
  });
  const shown = { hand, kitty, plays };
  memo.set(g, shown);
  return shown;
}

/** A shown card's code on the screen: "8h", "Ts", "B", "R". */
export const shownCode = (c: ShownCard): string => `${c.rank}${c.suit}`;

/** The hands laid down at a deal's end (ranks per seat), highest first: each copy of a rank
 * takes the next free suit across the three hands, so no card shows twice among them. */
export function shownHands(hands: string[]): ShownCard[][] {
  const used = new Map<string, number>();
  return hands.map((h) => highFirst([...h]).map((rank) => {
    if (rank === "B" || rank === "R") return { rank, suit: "" };
    const k = used.get(rank) ?? 0;
    used.set(rank, k + 1);
    return { rank, suit: SUITS[k % SUITS.length] };
  }));
}
