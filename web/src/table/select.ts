// Matching the cards a player picked against the legal moves, before anything is sent.
import type { GameModule, Plan } from "../games/types";

export type Match =
  | { kind: "one"; move: string }
  | { kind: "several"; moves: string[] }
  | { kind: "none"; reason: string };

function key(cards: string[]): string {
  return [...cards].sort().join(" ");
}

function contains(big: string[], small: string[]): boolean {
  const left = [...big];
  for (const c of small) {
    const i = left.indexOf(c);
    if (i < 0) return false;
    left.splice(i, 1);
  }
  return true;
}

/** The legal moves that take exactly the picked cards (and the picked centre card). */
export function matchSelection<G>(
  game: GameModule<G>, g: G, legal: string[], picked: string[], target: string | undefined,
): Match {
  const plans: [string, Plan][] = [];
  for (const m of legal) {
    const p = game.plan(m, g);
    if (p) plans.push([m, p]);
  }
  if (!plans.length) return { kind: "none", reason: "No card may be played now." };
  if (!picked.length) {
    return { kind: "none", reason: target ? "Now pick the card(s) from your hand to play on it." : "Pick the card(s) to play first." };
  }
  const want = key(picked);
  const hits = plans.filter(([, p]) => key(p.cards) === want && (p.target ?? "") === (target ?? ""));
  if (hits.length === 1) return { kind: "one", move: hits[0][0] };
  if (hits.length > 1) return { kind: "several", moves: hits.map(([m]) => m) };
  const sameCards = plans.filter(([, p]) => key(p.cards) === want);
  if (sameCards.length && sameCards.every(([, p]) => p.target)) {
    return { kind: "none", reason: target ? "These cards do not match that centre card." : "Pick the centre card to play on." };
  }
  if (plans.some(([, p]) => contains(p.cards, picked) && (p.target ?? "") === (target ?? ""))) {
    return { kind: "none", reason: "Not a whole move yet: pick more cards." };
  }
  return { kind: "none", reason: `That is not a legal play now. ${game.hint(g)}`.trim() };
}
