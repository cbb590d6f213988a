import type { GameModule } from "./types";
import { douDizhu } from "./douDizhu";
import { doppelkopf } from "./doppelkopf";
import { dobro } from "./dobro";
import { dos } from "./dos";
import { sobeEDesce } from "./sobeEDesce";
import { generic } from "./generic";

// the games with a web module of their own (web/src/games/<game>.tsx), by engine name
export const GAMES: Record<string, GameModule<any>> = Object.fromEntries(
  [douDizhu, doppelkopf, dobro, dos, sobeEDesce].map((m) => [m.name, m]),
);

/** The module that draws `game`'s table: its own, or the generic one for a game without one
 * (and for any game when `plain`, the plain table). */
export function gameModule(game: string, plain = false): GameModule<any> {
  return (!plain && GAMES[game]) || generic;
}
