// The table of a game without a module of its own (and the plain table, `?plain` in a table's
// address, for any game): the hand read from the view's `hand` field where it has one (card
// codes as text), the seats' hand sizes from `handSizes`, every other plain field of the view
// in the centre, and every legal move as a button labelled with its notation. It reads only the
// seat's own view, so it shows nothing the seat may not see.
import type { Back, Face } from "../cards/faces";
import { H, W } from "../cards/Card";
import type { GameView } from "../gen/croupier/v1/croupier_pb";
import { CentreLine } from "../table/bits";
import { t } from "../i18n";
import type { GameModule } from "./types";

type Fields = Record<string, unknown>;

const BACK: Back = { fill: "#455a64", word: "CARD" };
// fields the table shows elsewhere (the hand, the seats) or that are no game fact
const SHOWN_ELSEWHERE = new Set(["hand", "handSizes", "seat"]);

function face(code: string): Face {
  return {
    kind: "drawn",
    label: code,
    draw: () => (
      <g>
        <rect x="2" y="2" width={W - 4} height={H - 4} rx="14" fill="#fff" stroke="#333" stroke-width="2" />
        <text x={W / 2} y={H / 2 + 18} text-anchor="middle" font-size={code.length > 3 ? 40 : 60} font-weight="800"
          font-family="Arial, sans-serif" fill="#263238">{code}</text>
      </g>
    ),
  };
}

/** A field's value as one line of text; undefined for what is no plain value (a message). */
function text(value: unknown): string | undefined {
  if (typeof value === "string") return value || undefined;
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  if (typeof value === "boolean") return value ? t("games.yes") : t("games.no");
  if (Array.isArray(value) && value.every((x) => ["string", "number", "bigint", "boolean"].includes(typeof x))) {
    return value.length ? value.map(String).join(", ") : undefined;
  }
  return undefined;
}

/** `someField` as "some field". */
const words = (name: string): string => name.replace(/([A-Z])/g, " $1").toLowerCase();

const handCodes = (g: Fields): string[] => {
  const hand = g.hand;
  if (typeof hand === "string") return hand.split(" ").filter(Boolean);
  if (Array.isArray(hand) && hand.every((c) => typeof c === "string")) return hand as string[];
  return [];
};

export const generic: GameModule<Fields> = {
  name: "",
  back: BACK,
  clockwise: true,
  unwrap: (v: GameView | undefined) => (v?.game.case ? (v.game.value as unknown as Fields) : undefined),
  hand: (g) => handCodes(g).map((code) => ({ code, face: face(code) })),
  face,
  handSizes: (g) => (Array.isArray(g.handSizes) ? g.handSizes.map(Number) : []),
  plan: () => null,
  label: (m) => m,
  outOfTurn: () => false,
  seat: (g, seat) => (g.dealer === seat ? { badges: [t("games.dealer")] } : {}),
  Centre: ({ g }) => (
    <div class="centre-generic">
      {Object.keys(g).filter((k) => !k.startsWith("$") && !SHOWN_ELSEWHERE.has(k)).map((k) => {
        const shown = text(g[k]);
        return shown === undefined ? null : <CentreLine key={k} label={words(k)}>{shown}</CentreLine>;
      })}
    </div>
  ),
  playLabel: () => t("games.play"),
  hint: () => "",
  deals: () => 0,
  summary: () => null,
  sheet: (_g, names) => ({ header: names, rows: [] }),
  progress: () => "",
};
