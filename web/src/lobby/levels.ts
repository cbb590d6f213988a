// The built-in bot levels (bots/levels.py), by the names the API takes in `bot_level` and
// every frontend shows, each with the one-line description docs/levels.md gives it for
// players ("Naming a level"). The API does not list them; a browser test checks this list
// against the server's levels and the docs.
export const BOT_LEVELS: [name: string, description: string][] = [
  ["random", "any legal move"],
  ["heuristic", "rules of thumb, no search"],
  ["easy", "search, 50 tries a move"],
  ["medium", "search, 200 tries a move"],
  ["hard", "search, up to 1 s a move"],
  ["expert", "search, up to 4 s a move"],
];
export const DEFAULT_BOT = "medium";

/** A level as a seat choice names it: the API's name, then its description. */
export function levelText(name: string, description: string): string {
  return `Bot: ${name} (${description})`;
}
