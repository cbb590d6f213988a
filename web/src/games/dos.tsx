// Dos: the centre row in colour, each card a target to pick before the hand cards that match
// it; the Dos call and the catch as always-on buttons.
import type { JSX } from "preact";
import { useRef } from "preact/hooks";
import { t } from "../i18n";
import type { Back, Face } from "../cards/faces";
import { CardSvg, H, W } from "../cards/Card";
import { CardRow, CentreLine } from "../table/bits";
import type { GameView } from "../gen/croupier/v1/croupier_pb";
import type { DosView } from "../gen/croupier/v1/dos_pb";
import { sumSheet } from "./sheet";
import type { CentreProps, GameModule, SeatNote } from "./types";

// Dos cards, which no package draws: a colour (or wild) and a number or #
interface DosCard { colour: "b" | "g" | "r" | "y" | "w"; value: string }
const BACK: Back = { fill: "#222", word: "DOS" };

const DOS_FILL: Record<string, string> = { b: "#1f5fbf", g: "#2e8b3a", r: "#c8202c", y: "#e0a800", w: "#222" };

function DosFace({ f }: { f: DosCard }): JSX.Element {
  const fill = DOS_FILL[f.colour];
  const text = f.colour === "w" ? "2" : f.value;
  return (
    <g>
      <rect x="2" y="2" width={W - 4} height={H - 4} rx="14" fill="#fff" stroke="#333" stroke-width="2" />
      <rect x="10" y="10" width={W - 20} height={H - 20} rx="10" fill={fill} />
      {f.colour === "w" ? (
        <g>
          <path d={`M${W / 2} ${H / 2} L${W / 2} 40 A70 85 0 0 1 ${W - 22} ${H / 2} Z`} fill={DOS_FILL.r} />
          <path d={`M${W / 2} ${H / 2} L${W - 22} ${H / 2} A70 85 0 0 1 ${W / 2} ${H - 40} Z`} fill={DOS_FILL.y} />
          <path d={`M${W / 2} ${H / 2} L${W / 2} ${H - 40} A70 85 0 0 1 22 ${H / 2} Z`} fill={DOS_FILL.g} />
          <path d={`M${W / 2} ${H / 2} L22 ${H / 2} A70 85 0 0 1 ${W / 2} 40 Z`} fill={DOS_FILL.b} />
        </g>
      ) : (
        <ellipse cx={W / 2} cy={H / 2} rx="62" ry="86" fill="#fff" transform={`rotate(20 ${W / 2} ${H / 2})`} />
      )}
      <text x={W / 2} y={H / 2 + 30} text-anchor="middle" font-size={text.length > 1 ? 78 : 96} font-weight="900"
        font-family="Arial Black, Arial, sans-serif" fill={f.colour === "w" ? "#fff" : fill}
        stroke={f.colour === "w" ? "#222" : "none"} stroke-width="3">{text}</text>
      <text x="22" y="48" font-size="34" font-weight="900" font-family="Arial, sans-serif" fill="#fff">{text}</text>
      <text x={W - 22} y={H - 24} font-size="34" font-weight="900" font-family="Arial, sans-serif" fill="#fff"
        text-anchor="end">{text}</text>
    </g>
  );
}

function card(code: string): DosCard {
  if (code === "w2") return { colour: "w", value: "2" };
  return { colour: code[0] as "b" | "g" | "r" | "y", value: code.slice(1) };
}

function words(code: string): string {
  const f = card(code);
  if (f.colour === "w") return t("games.dos.wildDos");
  const colour = t(`games.dos.colour.${f.colour}`);
  return f.value === "#" ? t("games.dos.wildHash", { colour }) : t("games.dos.card", { colour, n: f.value });
}

/** The cards of a match as the view writes them ("b3+y4", or with spaces), one code each. */
const cardsOf = (text: string): string[] => text.split(/[+ ]/).filter(Boolean);

function face(code: string): Face {
  const f = card(code);
  return { kind: "drawn", label: words(code), draw: () => <DosFace f={f} /> };
}

function plan(m: string): { cards: string[]; target?: string } | null {
  const on = m.match(/^(\S+) on (\S+)$/);
  if (on) return { cards: on[1].split("+"), target: on[2] };
  const add = m.match(/^add (\S+)$/);
  if (add) return { cards: [add[1]] };
  return null;
}

function label(m: string): string {
  const p = plan(m);
  if (p && p.target) return t("games.dos.matchOn", { cards: p.cards.map(words).join(" + "), target: words(p.target) });
  if (p) return t("games.dos.add", { card: words(p.cards[0]) });
  const key: Record<string, string> = { draw: "draw", end: "end", "end dos": "endDos", dos: "callDos", catch: "catch" };
  return key[m] ? t(`games.dos.move.${key[m]}`) : m;
}

interface Turn { key: string; seat: number; matches: { cards: string[]; target: string }[]; adds: string[]; drew: boolean }

/** The centre: the row to match on, and the turn just played, kept in view after the row has
 * been cleared and refilled, so that every opponent's match is seen, in cards and in words. */
function DosCentre({ g, names, target, onTarget }: CentreProps<DosView>): JSX.Element {
  const seen = useRef<Turn | null>(null);
  const key = `${g.round}:${g.turns}`;
  const adds = g.adds.split(" ").filter(Boolean);
  if (g.matches.length || adds.length || g.drew) {
    seen.current = { key, seat: g.current, matches: g.matches.map((m) => ({ cards: cardsOf(m.cards), target: m.target })), adds, drew: g.drew };
  }
  const last = seen.current && seen.current.key !== key ? seen.current : null;
  const row = g.row.split(" ").filter(Boolean);
  const matched = new Set(g.matches.map((m) => m.rowIndex));
  return (
    <div class="centre-dos">
      {last && <LastTurn turn={last} names={names} />}
      <div class="info-label">{t("games.dos.rowLabel")}</div>
      <div class="target-row" role="group" aria-label={t("games.dos.rowAria")}>
        {row.map((c, i) => (
          <button type="button" key={`${c}-${i}`} class={`card target ${target === c ? "selected" : ""} ${matched.has(i) ? "matched" : ""}`}
            data-target={c} aria-pressed={target === c} aria-label={t("games.dos.centreCard", { card: words(c) })}
            onClick={() => onTarget(target === c ? undefined : c)}>
            <CardSvg face={face(c)} back={BACK} />
          </button>
        ))}
      </div>
      {g.matches.length > 0 && (
        <CentreLine label={t("games.dos.matchedThisTurn", { name: names[g.current] ?? "" })}>
          {g.matches.map((m) => t("games.dos.matchOn", { cards: cardsOf(m.cards).map(words).join(" + "), target: words(m.target) })).join(" · ")}
        </CentreLine>
      )}
      {g.bonusOwed > 0 && <CentreLine label={t("games.dos.bonus")}>{t("games.dos.bonusOwed", { n: g.bonusOwed })}</CentreLine>}
      <CentreLine label={t("games.dos.drawPile")}>{t("games.dos.pileLine", { n: g.drawPile, d: g.discards.split(" ").filter(Boolean).length })}</CentreLine>
    </div>
  );
}

function LastTurn({ turn, names }: { turn: Turn; names: string[] }): JSX.Element {
  const said = [...turn.matches.map((m) => t("games.dos.matchOn", { cards: m.cards.map(words).join(" + "), target: words(m.target) })),
    ...turn.adds.map((c) => t("games.dos.added", { card: words(c) }))];
  if (turn.drew && !turn.matches.length) said.unshift(t("games.dos.drewOnly"));
  return (
    <div class="last-turn" id="last-turn" role="status" aria-label={`${names[turn.seat]}: ${said.join("; ")}`}>
      <b>{t("games.dos.lastTurn", { name: names[turn.seat] ?? "" })}</b>
      {turn.matches.map((m, i) => (
        <span class="match" key={i}>
          <CardRow cards={m.cards} face={face} back={BACK} small />
          <span class="on">{t("games.dos.on")}</span>
          <CardRow cards={[m.target]} face={face} back={BACK} small />
        </span>
      ))}
      {turn.adds.length > 0 && <span class="match"><span class="on">{t("games.dos.addedShort")}</span>
        <CardRow cards={turn.adds} face={face} back={BACK} small /></span>}
      <span class="sr-only">{said.join("; ")}</span>
      {turn.drew && !turn.matches.length && <span class="on">{t("games.dos.drewOnly")}</span>}
    </div>
  );
}

export const dos: GameModule<DosView> = {
  name: "dos",
  back: BACK,
  clockwise: true,
  unwrap: (v: GameView | undefined) => (v?.game.case === "dos" ? v.game.value : undefined),
  hand: (g) => g.hand.split(" ").filter(Boolean).map((c) => ({ code: c, face: face(c) })),
  face,
  handSizes: (g) => g.handSizes,
  plan,
  label,
  outOfTurn: (m) => m === "dos" || m === "catch",
  seat: (g, seat) => {
    const note: SeatNote = { badges: [] };
    if (seat === g.dealer) note.badges!.push(t("games.dealer"));
    if (seat === g.dosWindow) note.badges!.push(t("games.dos.noDosBadge"));
    if (seat === g.current && g.drew) note.text = t("games.dos.drewACard");
    return note;
  },
  Centre: (props) => <DosCentre {...props} />,
  playLabel: () => t("games.play"),
  hint: () => t("games.dos.hint"),
  playing: () => true,
  lastPlay: (g) => {
    const adds = g.adds.split(" ").filter(Boolean);
    const m = g.matches[g.matches.length - 1];
    if (adds.length) return { seat: g.current, cards: [adds[adds.length - 1]] };
    return m ? { seat: g.current, cards: cardsOf(m.cards), target: m.target } : undefined;
  },
  deals: (g) => g.history.length,
  summary: (g, deal, names) => {
    const h = g.history[deal];
    if (!h) return null;
    const scores = names.map((_, i) => (i === h.winner ? Number(h.points) : 0));
    const w = names[h.winner];
    return {
      title: t("games.dos.sumTitle", { name: w, n: deal + 1 }),
      lines: [h.blocked ? t("games.dos.sumBlocked", { name: w }) : t("games.dos.sumOut", { name: w }),
        ...names.map((n, i) => (i === h.winner ? "" : t("games.dos.sumHand", { name: n, n: Number(h.handPoints[i] ?? 0) }))).filter(Boolean),
        t("games.dos.sumScores", { name: w, n: Number(h.points) }),
        t("games.dos.sumValues")],
      scores,
      scoreLabel: t("games.points"),
      hands: h.hands.map((c, seat) => ({ seat, cards: cardsOf(c) })).filter((x) => x.cards.length),
    };
  },
  sheet: (g, names) => sumSheet(names, g.history.map((h) => names.map((_, i) => (i === h.winner ? Number(h.points) : 0))), t("games.round")),
  get finalLabel() {
    return t("games.dos.finalLabel");
  },
  progress: (g) => t("games.dos.progress", { n: g.round + 1, target: g.target }),
  get pickFirst() {
    return t("games.dos.pickFirst");
  },
  autoEnd: (legal) => {
    const turn = legal.filter((m) => m !== "dos" && m !== "catch");
    if (!turn.length || !turn.every((m) => m === "end" || m === "end dos")) return undefined;
    return turn.includes("end dos") ? "end dos" : "end"; // two cards left: call it while ending
  },
};
