import type { GameModule } from "./types";
import { douDizhu } from "./douDizhu";
import { doppelkopf } from "./doppelkopf";
import { dobro } from "./dobro";
import { dos } from "./dos";
import { sobeEDesce } from "./sobeEDesce";

export const GAMES: Record<string, GameModule<any>> = {
  dou_dizhu: douDizhu, doppelkopf, dobro, dos, sobe_e_desce: sobeEDesce,
};
