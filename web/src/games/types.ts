// What the generic table asks of a game. The table knows no game: every rule of notation,
// card order, centre and score lives in one module per game (games/*.tsx).
import type { ComponentChildren } from "preact";
import type { Back, Face } from "../cards/faces";
import type { GameView, TableView } from "../gen/croupier/v1/croupier_pb";

/** A card in a hand: its code in the game's notation, and how it looks. */
export interface HandCard {
  code: string;
  face: Face;
  /** a tag on the card, a key of games.mark.* ("kitty": the landlord's cards from the kitty) */
  mark?: string;
}

/** What a move takes from the table: cards from the hand and, in some games, a centre card. */
export interface Plan { cards: string[]; target?: string }

/** What the table shows at one seat besides its name and hand size. */
export interface SeatNote {
  played?: string[];     // the cards it last played, in front of it
  text?: string;         // "Pass", "bid 2", "plays" ...
  badges?: string[];     // Re, Kontra, no 90, Landlord, dealer ...
}

export interface CentreProps<G> {
  g: G;
  view: TableView;
  names: string[];
  target: string | undefined;          // the centre card picked, in games that have one
  onTarget: (code: string | undefined) => void;
}

/** One finished deal as the rulebook counts it. */
export interface DealSummary {
  title: string;
  lines: string[];          // how the score came about
  scores: number[];         // per seat, as the game's view counts them
  scoreLabel: string;       // what those numbers are ("points", "penalty points"...)
  /** the hands the rules lay down at the deal's end (codes as `face` reads them); a seat that
   * went out has none and is left out */
  hands?: { seat: number; cards: string[] }[];
}

/** Cards that lay on the felt and leave it together (a trick, a round of a climbing game, a
 * pile): who had played what, and the seat that collects them (null: out of play). */
export interface ClosedPlay { played: { seat: number; cards: string[] }[]; to: number | null }

export interface ScoreSheet { header: string[]; rows: string[][]; totals?: string[] }

export interface GameModule<G = unknown> {
  name: string;
  back: Back;
  /** play goes to the left of the player (true) or to the right (as some games' apps do) */
  clockwise: boolean;
  unwrap(v: GameView | undefined): G | undefined;
  hand(g: G): HandCard[];
  face(code: string): Face;
  handSizes(g: G): number[];
  /** null: a move made with a button, not with cards */
  plan(move: string, g: G): Plan | null;
  /** the move in words, for buttons, choices and the log */
  label(move: string, g: G, names: string[]): string;
  /** moves that may be made whoever's turn it is: always-on buttons */
  outOfTurn(move: string, g: G): boolean;
  seat(g: G, seat: number, names: string[]): SeatNote;
  Centre(props: CentreProps<G>): ComponentChildren;
  /** what to pick before the hand's cards, where a move takes more than cards from the hand */
  pickFirst?: string;
  /** the word on the play button (an exchange, say) */
  playLabel(g: G): string;
  /** why a selection is no move, where the game can say more than "not legal" */
  hint(g: G): string;
  /** why the picked cards are no move, in the game's words ("this does not beat the pair of
   * 9s", "pick 2 more cards of the same rank"); undefined: the table's generic reasons */
  explain?(picked: string[], legal: string[], g: G): string | undefined;
  /** whether cards are being played now (not bids or calls): a turn without a card move then
   * dims the whole hand */
  playing?(g: G): boolean;
  /** the cards the last move put on the table, for the table to animate: the seat, the codes
   * (as `face` reads them) and, in games with a centre row, the centre card they went on */
  lastPlay?(g: G): { seat: number; cards: string[]; target?: string } | undefined;
  /** the legal plays a Hint button cycles through, in the order it offers them; absent: no Hint */
  hints?(legal: string[], g: G): string[];
  /** what the pick line says when the picked cards make several moves ("Joker as:") */
  chooseText?(moves: string[], g: G): string;
  /** a short label for one of several moves that take the same cards (a joker's value) */
  choiceLabel?(move: string, g: G): string;
  /** finished deals so far, and the summary of one of them */
  deals(g: G): number;
  summary(g: G, deal: number, names: string[]): DealSummary | null;
  sheet(g: G, names: string[]): ScoreSheet;
  /** the score shown at each seat, where Result.totals is not what players count */
  seatScore?(g: G, seat: number): string;
  /** the final screen's column: what Result.totals means in this game, shown as the game counts */
  finalLabel?: string;
  finalScore?(g: G, total: number, seat: number): string;
  /** one line for the header: "Deal 2 of 4", "Round 1 of 3" */
  progress(g: G): string;
  /** the move a player's opt-in auto-end plays when ending the turn is all that `legal`
   * leaves, else undefined; games without the notion leave it out. The server never ends a
   * turn by itself where that would tell the table what the hand allows: the client may,
   * for its own player, from the moves it was given. */
  autoEnd?(legal: string[], g: G): string | undefined;
  // ---- motion (optional: the table guesses where a module says nothing) ------------------
  /** The move `move` of `seat` took `before` to `after` and cleared the felt: what lay there
   * (the mover's cards included) and who gathers it. Left out, the table takes every seat's
   * `played` of `before` plus the move's `plan` cards and gives them to the next seat on turn
   * in `after` (the trick's winner in trick games). Return null where nothing was gathered. */
  closedPlay?(before: G, after: G, move: string, seat: number): ClosedPlay | null;
  /** Cards that a move sent somewhere other than the felt in front of the mover (a match
   * onto a centre card): the CSS selector of the element they fly to, else the mover's own
   * played place. */
  moveTarget?(move: string, after: G): string | undefined;
}
