// Matching the cards a player picked against the legal moves, before anything is sent; which
// hand cards can start or continue a legal move (the others are dimmed); what a tap on a card
// means (add to the pick, start a new pick, or play at once).
import type { GameModule, Plan } from "../games/types";
import { t } from "../i18n";

export type Match =
  | { kind: "one"; move: string }
  | { kind: "several"; moves: string[] }
  | { kind: "none"; reason: string };

// The move the player chose among several that take the same cards (the joker's value, an
// airplane read one way or the other, a Hint): Play sends that one instead of asking again.
let preferred: string | undefined;
export function prefer(move: string | undefined): void {
  preferred = move;
}
export function preferredMove(): string | undefined {
  return preferred;
}

function key(cards: string[]): string {
  return [...cards].sort().join(" ");
}

/** Whether the multiset `small` is inside the multiset `big`. */
export function contains(big: string[], small: string[]): boolean {
  const left = [...big];
  for (const c of small) {
    const i = left.indexOf(c);
    if (i < 0) return false;
    left.splice(i, 1);
  }
  return true;
}

/** The legal moves made with cards, with what each takes. */
export function cardPlans<G>(game: GameModule<G>, g: G, legal: string[]): [string, Plan][] {
  const plans: [string, Plan][] = [];
  for (const m of legal) {
    const p = game.plan(m, g);
    if (p) plans.push([m, p]);
  }
  return plans;
}

const onTarget = (p: Plan, target: string | undefined) => !target || (p.target ?? "") === target;

/** The hand indices that can start a legal move or continue the current pick: the others are
 * dimmed. Picked cards stay live (a tap takes them back). With no card move, nothing is dimmed. */
export function liveCards<G>(
  game: GameModule<G>, g: G, legal: string[], hand: string[], picked: number[], target: string | undefined,
): Set<number> {
  const plans = cardPlans(game, g, legal).filter(([, p]) => onTarget(p, target));
  const all = new Set(hand.map((_, i) => i));
  // no card move: the whole hand dims where cards are being played (a pass is all that is
  // left), and stays lit in phases of words (bids, calls) and while others are to act
  if (!cardPlans(game, g, legal).length) return legal.length && game.playing?.(g) ? new Set(picked) : all;
  const pickedCodes = picked.map((i) => hand[i]);
  const live = new Set<number>(picked);
  hand.forEach((code, i) => {
    if (live.has(i)) return;
    if (plans.some(([, p]) => contains(p.cards, [code]))) live.add(i);
    else if (pickedCodes.length && plans.some(([, p]) => contains(p.cards, [...pickedCodes, code]))) live.add(i);
  });
  return live;
}

/** What a tap on hand card `i` does: the new pick, and the move to send at once where the
 * player's option allows it and the new pick is one whole move that no other card extends. */
export function tap<G>(
  game: GameModule<G>, g: G, legal: string[], hand: string[], picked: number[], i: number,
  target: string | undefined, oneTap: boolean,
): { picked: number[]; play?: string } {
  if (picked.includes(i)) return { picked: picked.filter((j) => j !== i) };
  const plans = cardPlans(game, g, legal).filter(([, p]) => onTarget(p, target));
  if (!plans.length) return { picked: [...picked, i] }; // no card move now: a pick to look at
  const codes = picked.map((j) => hand[j]);
  let next: number[];
  const finished = !codes.length || plans.some(([, p]) => key(p.cards) === key(codes));
  if (plans.some(([, p]) => contains(p.cards, [...codes, hand[i]]))) next = [...picked, i];
  else if (!plans.some(([, p]) => contains(p.cards, [hand[i]]))) return { picked }; // a dimmed card starts nothing
  else if (finished) next = [i]; // the pick was a whole move: this card starts a new one
  else next = [...picked, i]; // an unfinished pick grows, and the line under the hand says why it is no move
  if (!oneTap) return { picked: next };
  const want = key(next.map((j) => hand[j]));
  const whole = plans.filter(([, p]) => key(p.cards) === want);
  const longer = plans.some(([, p]) => p.cards.length > next.length && contains(p.cards, next.map((j) => hand[j])));
  if (whole.length === 1 && !longer) return { picked: next, play: whole[0][0] };
  return { picked: next };
}

/** The legal moves that take exactly the picked cards (and the picked centre card). */
export function matchSelection<G>(
  game: GameModule<G>, g: G, legal: string[], picked: string[], target: string | undefined, usePreferred = true,
): Match {
  const plans = cardPlans(game, g, legal);
  if (!plans.length) return { kind: "none", reason: t("games.select.noCardMove") };
  if (!picked.length) {
    return { kind: "none", reason: target ? t("games.select.nowPickHand") : t("games.select.pickFirst") };
  }
  const want = key(picked);
  const sameCards = plans.filter(([, p]) => key(p.cards) === want);
  // a centre card is not needed where the picked cards fit one centre card only
  const hits = target ? sameCards.filter(([, p]) => (p.target ?? "") === target)
    : sameCards.filter(([, p]) => !p.target).length ? sameCards.filter(([, p]) => !p.target)
    : new Set(sameCards.map(([, p]) => p.target)).size === 1 ? sameCards : [];
  if (hits.length === 1) return { kind: "one", move: hits[0][0] };
  if (hits.length > 1) {
    if (usePreferred && preferred && hits.some(([m]) => m === preferred)) return { kind: "one", move: preferred };
    return { kind: "several", moves: hits.map(([m]) => m) };
  }
  if (sameCards.length && sameCards.every(([, p]) => p.target)) {
    return { kind: "none", reason: target ? t("games.select.notOnThatCard") : t("games.select.pickCentre") };
  }
  const said = game.explain?.(picked, legal, g);
  if (said) return { kind: "none", reason: said };
  const longer = plans.filter(([, p]) => contains(p.cards, picked) && onTarget(p, target));
  if (longer.length) {
    const more = Math.min(...longer.map(([, p]) => p.cards.length)) - picked.length;
    return { kind: "none", reason: t("games.select.pickMore", { n: more }) };
  }
  return { kind: "none", reason: `${t("games.select.notLegal")} ${game.hint(g)}`.trim() };
}
