// The built-in bot levels (bots/levels.py), by the names the API takes in `bot_level` and
// every frontend shows, each with the one-line description docs/levels.md gives it for
// players ("Naming a level"), in the catalogue as `common.level.<name>` (English there is
// docs/levels.md's words). The API does not list them; a browser test checks this list
// against the server's levels and the docs.
import { t } from "../i18n";

export const BOT_LEVELS = ["random", "heuristic", "easy", "medium", "hard", "expert"] as const;
export const DEFAULT_BOT = "medium";

/** A level as a seat choice names it: the API's name, then its description. */
export function levelText(name: string): string {
  return t("common.level.option", { name, description: t(`common.level.${name}`) });
}
