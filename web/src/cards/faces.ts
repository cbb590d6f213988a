// What a card looks like, independent of any game's notation: the game modules turn their
// card codes into one of these faces and the card components draw them.
export type Suit = "c" | "d" | "h" | "s";
export type FrenchRank = "A" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9" | "10" | "J" | "Q" | "K";

export type Face =
  | { kind: "french"; rank: FrenchRank; suit: Suit }
  | { kind: "joker"; colour: "black" | "red" }
  | { kind: "dos"; colour: "b" | "g" | "r" | "y" | "w"; value: string }
  | { kind: "dobro"; value: string };

export type Back = "french" | "dos" | "dobro";

const SUIT_NAMES: Record<Suit, string> = { c: "clubs", d: "diamonds", h: "hearts", s: "spades" };
const SUIT_SYMBOLS: Record<Suit, string> = { c: "♣", d: "♦", h: "♥", s: "♠" };
const RANK_NAMES: Record<FrenchRank, string> = {
  A: "ace", "2": "two", "3": "three", "4": "four", "5": "five", "6": "six", "7": "seven", "8": "eight",
  "9": "nine", "10": "ten", J: "jack", Q: "queen", K: "king",
};
const DOS_COLOURS: Record<string, string> = { b: "blue", g: "green", r: "red", y: "yellow", w: "wild" };

export function suitName(s: Suit): string {
  return SUIT_NAMES[s];
}
export function suitSymbol(s: Suit): string {
  return SUIT_SYMBOLS[s];
}

/** The words a screen reader says for a card. */
export function faceLabel(f: Face): string {
  switch (f.kind) {
    case "french":
      return `${RANK_NAMES[f.rank]} of ${SUIT_NAMES[f.suit]}`;
    case "joker":
      return `${f.colour} joker`;
    case "dos":
      if (f.colour === "w") return "wild DOS (a 2 of any colour)";
      return f.value === "#" ? `${DOS_COLOURS[f.colour]} wild #` : `${DOS_COLOURS[f.colour]} ${f.value}`;
    case "dobro":
      return f.value === "J" ? "joker" : f.value === "S" ? "skip" : f.value === "R" ? "reverse" : `value ${f.value}`;
  }
}

/** A short text form for logs and dialogs: "Q♣", "10♥", "blue 7". */
export function faceShort(f: Face): string {
  switch (f.kind) {
    case "french":
      return `${f.rank}${SUIT_SYMBOLS[f.suit]}`;
    case "joker":
      return f.colour === "red" ? "big joker" : "small joker";
    case "dos":
    case "dobro":
      return faceLabel(f);
  }
}
