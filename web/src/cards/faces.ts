// What a card looks like, independent of any game's notation: the game modules turn their
// card codes into one of these faces and the card components draw them. French cards come from
// a package (one file per face: `cardHref`); a game whose cards no package draws draws them itself (a "drawn" face, and a
// plain back of its colour and word).
import type { JSX } from "preact";
import { t } from "../i18n";
export type Suit = "c" | "d" | "h" | "s";
export type FrenchRank = "A" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9" | "10" | "J" | "Q" | "K";

export type Face =
  | { kind: "french"; rank: FrenchRank; suit: Suit }
  | { kind: "joker"; colour: "black" | "red" }
  | { kind: "drawn"; label: string; draw: () => JSX.Element };

/** The French pattern, or a plain back of a colour with a word on it. */
export type Back = "french" | { fill: string; word: string };

// The file of each French face (svg-cards' ids: "heart_queen", "joker_red", "back"), put in by
// the build (build.mjs): each face is a file of its own under a name that changes with its
// content, so a table fetches only the faces it shows, and browsers keep them.
declare const __CARD_FILES__: Record<string, string>;

/** The <use> reference of a French face or the French back: `<file>#<id>`. */
export function cardHref(id: string): string {
  return `${__CARD_FILES__[id] ?? __CARD_FILES__.back}#${id}`;
}

const SUIT_SYMBOLS: Record<Suit, string> = { c: "♣", d: "♦", h: "♥", s: "♠" };


export function suitName(s: Suit): string {
  return t(`games.card.suit.${s}`);
}
export function suitSymbol(s: Suit): string {
  return SUIT_SYMBOLS[s];
}

/** The words a screen reader says for a card. */
export function faceLabel(f: Face): string {
  switch (f.kind) {
    case "french":
      return t("games.card.of", { rank: t(`games.card.rank.${f.rank}`), suit: suitName(f.suit) });
    case "joker":
      return f.colour === "red" ? t("games.card.bigJoker") : t("games.card.smallJoker");
    case "drawn":
      return f.label;
  }
}

/** A short text form for logs and dialogs: "Q♣", "10♥", "blue 7". */
export function faceShort(f: Face): string {
  switch (f.kind) {
    case "french":
      return `${f.rank}${SUIT_SYMBOLS[f.suit]}`;
    case "joker":
      return f.colour === "red" ? t("games.card.bigJoker") : t("games.card.smallJoker");
    case "drawn":
      return f.label;
  }
}
