// Where a game's rules are read in the client. The table links its rules with
// `<a href={rulesHref(game)}>`; the page itself is rules/RulesPage.tsx.

import { RULEBOOKS } from "./docs";

/** The games whose rulebook the client carries (seeds/<game>.md). */
export const RULE_GAMES: readonly string[] = Object.keys(RULEBOOKS);

/** The address of a game's rules page, or "" for a game without a rulebook here. */
export function rulesHref(game: string): string {
  return RULE_GAMES.includes(game) ? `#/rules/${game}` : "";
}
