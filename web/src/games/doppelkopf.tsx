// Doppelkopf: the hand in the trump order of the game being played, the parties and every
// announcement as badges at their seats, the trick in front of the seats, the last trick on
// demand.
import { useState } from "preact/hooks";
import type { Face, FrenchRank, Suit } from "../cards/faces";
import { suitSymbol } from "../cards/faces";
import { CardRow, CentreLine } from "../table/bits";
import type { GameView } from "../gen/croupier/v1/croupier_pb";
import { DoppelkopfPhase, type DoppelkopfView } from "../gen/croupier/v1/doppelkopf_pb";
import { t } from "../i18n";
import { Legend } from "./legend";
import { sumSheet } from "./sheet";
import type { GameModule, SeatNote } from "./types";

// engines/doppelkopf/moves.py CONTRACT_NAMES, in words
const CONTRACT_KEYS = ["normal", "marriage", "diamondSolo", "heartSolo", "spadeSolo", "clubSolo", "queenSolo",
  "jackSolo", "aceSolo", "pureClubSolo", "pureSpadeSolo", "pureHeartSolo", "pureDiamondSolo"];
/** The contract in words ("Queen solo"). */
export const contractName = (c: number): string => (CONTRACT_KEYS[c] ? t(`games.dk.contract.${CONTRACT_KEYS[c]}`) : String(c));
const LEVEL_KEYS = ["", "", "no90", "no60", "no30", "schwarz"];
const party = (p: string) => t(p === "re" ? "games.dk.re" : "games.dk.kontra");
const announced = (who: string, level: number) => (level >= 2 ? `${party(who)} ${t(`games.dk.level.${LEVEL_KEYS[level]}`)}` : party(who));

/** One counted item of a deal's value (the engine's words), in the player's words, with the
 * points it gives and the party it gives them to: the reading of engines/doppelkopf/scoring.py's
 * item_value. */
export function itemLine(item: string, winner: number): { text: string; points: number; party: string } {
  const winnerParty = winner === 1 ? "re" : "kontra";
  const loser = winner === 1 ? "kontra" : "re";
  let m: RegExpMatchArray | null;
  if (item === "won") return { text: t("games.dk.item.won", { party: party(winnerParty) }), points: 1, party: winnerParty };
  if ((m = item.match(/^under (\d+)$/))) return { text: t("games.dk.item.under", { party: party(loser), n: m[1] }), points: 1, party: winnerParty };
  if (item === "schwarz") return { text: t("games.dk.item.schwarz", { party: party(loser) }), points: 1, party: winnerParty };
  if (item === "nobody won") return { text: t("games.dk.item.nobody"), points: 0, party: "" };
  if ((m = item.match(/^(re|kontra) announced$/))) return { text: t("games.dk.item.announced", { party: party(m[1]) }), points: 2, party: winnerParty };
  if ((m = item.match(/^(re|kontra) (no 90|no 60|no 30|schwarz)$/))) {
    return { text: t("games.dk.item.absage", { party: party(m[1]), what: t(`games.dk.level.${m[2].replace(" ", "")}`) }), points: 1, party: winnerParty };
  }
  if ((m = item.match(/^(?:(re|kontra) )?reached against announcement x(\d+)$/))) {
    const who = m[1] ?? winnerParty;
    return { text: t("games.dk.item.against", { party: party(who), n: Number(m[2]) }), points: Number(m[2]), party: who };
  }
  if ((m = item.match(/^(re|kontra) held (re|kontra) (.+)$/))) {
    return { text: t("games.dk.item.held", { party: party(m[1]), other: party(m[2]), what: m[3] }), points: 1, party: m[1] };
  }
  if (item === "against the club queens") return { text: t("games.dk.item.againstQueens"), points: 1, party: "kontra" };
  if ((m = item.match(/^(.+) (re|kontra)$/))) {
    const key = { doppelkopf: "doppelkopf", "fox caught": "fox", charlie: "charlie" }[m[1]];
    return { text: key ? t(`games.dk.special.${key}`) : m[1], points: 1, party: m[2] };
  }
  return { text: item, points: 0, party: "" };
}

function face(code: string): Face {
  const r = code[0] === "T" ? "10" : code[0];
  return { kind: "french", rank: r as FrenchRank, suit: code[1] as Suit };
}

const SIDE = "ATKQJ9";
/** Sort key: trumps first, highest first, then the side suits clubs, spades, hearts, diamonds. */
function sortKey(contract: number): (code: string) => number {
  const suitSolo: Record<number, string> = { 2: "d", 3: "h", 4: "s", 5: "c" };
  const pure: Record<number, string> = { 9: "c", 10: "s", 11: "h", 12: "d" };
  const queensJacks = ["Qc", "Qs", "Qh", "Qd", "Jc", "Js", "Jh", "Jd"];
  let trumps: string[];
  if (contract === 6) trumps = ["Qc", "Qs", "Qh", "Qd"];
  else if (contract === 7) trumps = ["Jc", "Js", "Jh", "Jd"];
  else if (contract === 8) trumps = [];
  else if (pure[contract]) trumps = [..."ATKQJ"].map((r) => r + pure[contract]);
  else {
    const s = suitSolo[contract] ?? "d";
    trumps = ["Th", ...queensJacks, ...["A", "T", "K", "9"].map((r) => r + s).filter((c) => c !== "Th")];
  }
  return (code) => {
    const t = trumps.indexOf(code);
    if (t >= 0) return t;
    return 100 + "cshd".indexOf(code[1]) * 10 + SIDE.indexOf(code[0]);
  };
}

function seatOfTrickCard(leader: number, i: number): number {
  return (leader + i) % 4;
}

const isCard = (m: string) => /^[ATKQJ9][cshd]$/.test(m);
const isAnnouncement = (m: string) => /^(re|kontra)\b/.test(m) || m === "pass";

function announcementLabel(m: string): string {
  if (m === "pass") return t("games.dk.noAnnouncement");
  const [who, ...rest] = m.split(" ");
  const level = rest.join(" ");
  return level ? `${party(who)}: ${t(`games.dk.level.${level.replace(" ", "")}`)}` : party(who);
}

function callLabel(m: string): string {
  if (m === "healthy") return t("games.dk.call.healthy");
  if (m === "reservation") return t("games.dk.call.reservation");
  if (m === "marriage") return t("games.dk.call.marriage");
  const solo = m.match(/^solo (pure )?(\w+)$/);
  if (solo) {
    const key: Record<string, string> = { diamonds: "diamond", hearts: "heart", spades: "spade", clubs: "club",
      queens: "queen", jacks: "jack", aces: "ace" };
    const base = key[solo[2]] ?? solo[2];
    const name = solo[1] ? `pure${base[0].toUpperCase()}${base.slice(1)}Solo` : `${base}Solo`;
    return CONTRACT_KEYS.includes(name) ? t(`games.dk.contract.${name}`) : m;
  }
  return m;
}

function LastTrick({ g, names }: { g: DoppelkopfView; names: string[] }) {
  const [open, setOpen] = useState(false);
  const last = g.tricks[g.tricks.length - 1];
  if (!last) return null;
  return (
    <div class="last-trick">
      <button type="button" id="last-trick" class="small-button" aria-expanded={open} onClick={() => setOpen(!open)}>
        {open ? t("games.dk.hideLastTrick") : t("games.dk.lastTrick")}
      </button>
      {open && (
        <div class="last-trick-cards">
          <CardRow cards={last.cards.split(" ")} face={face} back="french" small />
          <span> {t("games.dk.wonBy", { name: names[last.winner] })}</span>
        </div>
      )}
    </div>
  );
}

export const doppelkopf: GameModule<DoppelkopfView> = {
  name: "doppelkopf",
  back: "french",
  clockwise: true,
  unwrap: (v: GameView | undefined) => (v?.game.case === "doppelkopf" ? v.game.value : undefined),
  hand: (g) => {
    const key = sortKey(g.contract);
    return g.hand.split(" ").filter(Boolean).sort((a, b) => key(a) - key(b)).map((c) => ({ code: c, face: face(c) }));
  },
  face,
  handSizes: (g) => g.handSizes,
  plan: (m) => (isCard(m) ? { cards: [m] } : null),
  label: (m) => (isCard(m) ? `${m[0] === "T" ? "10" : m[0]}${suitSymbol(m[1] as Suit)}` : isAnnouncement(m) ? announcementLabel(m) : callLabel(m)),
  outOfTurn: (m) => isAnnouncement(m),
  seat: (g, seat) => {
    const note: SeatNote = { badges: [] };
    const side = g.parties[seat];
    if (side === 1) note.badges!.push(t("games.dk.reParty"));
    else if (side === 0) note.badges!.push(t("games.dk.kontraParty"));
    if (seat === g.declarer) note.badges!.push(g.contract === 1 ? t("games.dk.bride") : t("games.dk.soloist"));
    if (seat === g.partner) note.badges!.push(t("games.dk.partner"));
    for (const a of g.announcements) if (a.seat === seat && a.move !== "pass") note.badges!.push(announcementLabel(a.move));
    if (g.phase === DoppelkopfPhase.RESERVATIONS || g.phase === DoppelkopfPhase.DECLARATION) {
      const call = g.calls.filter((c) => c.seat === seat).pop();
      if (call) note.text = callLabel(call.move);
    } else if (g.phase === DoppelkopfPhase.PLAYING) {
      // the open trick, or the last one until the next card is led
      const open = g.trick?.cards ? g.trick : g.tricks[g.tricks.length - 1];
      const cards = (open?.cards ?? "").split(" ").filter(Boolean);
      const i = cards.findIndex((_, k) => seatOfTrickCard(open!.leader, k) === seat);
      if (i >= 0) note.played = [cards[i]];
      if (!g.trick?.cards && open && open.winner === seat) note.badges!.push(t("games.dk.tookTrick"));
      if (g.points.length) note.text = t("games.dk.cardPoints", { n: g.points[seat] });
    }
    return note;
  },
  Centre: ({ g, names }) => (
    <div class="centre-doppelkopf">
      <CentreLine label={t("games.dk.game")}>{`${contractName(g.contract)}${g.declarer >= 0 ? ` (${names[g.declarer]})` : ""}`}</CentreLine>
      {(g.reLevel > 0 || g.kontraLevel > 0) && (
        <CentreLine label={t("games.dk.announced")}>
          {[g.reLevel ? announced("re", g.reLevel) : "", g.kontraLevel ? announced("kontra", g.kontraLevel) : ""]
            .filter(Boolean).join(" · ")}
        </CentreLine>
      )}
      {g.toFollow && <CentreLine label={t("games.dk.toFollow")}>{t(`games.dk.follow.${g.toFollow}`, { defaultValue: g.toFollow })}</CentreLine>}
      {g.phase === DoppelkopfPhase.PLAYING && <CentreLine label={t("games.dk.tricks")}>{t("games.dk.tricksOf", { n: g.tricks.length, of: g.bistro ? 10 : 12 })}</CentreLine>}
      <LastTrick g={g} names={names} />
      <Legend words={[{ word: t("games.dk.re"), text: t("games.dk.reExplained") },
        { word: t("games.dk.kontra"), text: t("games.dk.kontraExplained") }]} />
    </div>
  ),
  playLabel: () => t("games.play"),
  hint: (g) => (g.toFollow ? t("games.dk.mustFollow", { what: t(`games.dk.follow.${g.toFollow}`, { defaultValue: g.toFollow }) }) : ""),
  playing: (g) => g.phase === DoppelkopfPhase.PLAYING,
  deals: (g) => g.history.length,
  summary: (g, deal, names) => {
    const h = g.history[deal];
    if (!h) return null;
    const list = (xs: string[]) => (xs.length < 2 ? xs.join("") : t("games.listAnd", { head: xs.slice(0, -1).join(", "), last: xs[xs.length - 1] }));
    const re = list(h.reSeats.map((s) => names[s]));
    const kontra = list(names.filter((_, i) => !h.reSeats.includes(i)));
    const title = h.noScore ? t("games.dk.noScore") : h.winner === 1 ? t("games.dk.reWins", { names: re })
      : h.winner === 0 ? t("games.dk.kontraWins", { names: kontra }) : t("games.dk.nobodyWins");
    const items = h.items.map((it) => itemLine(it, h.winner));
    return {
      title,
      lines: [`${contractName(h.contract)}${h.declarer >= 0 ? ` · ${names[h.declarer]}` : ""}`,
        t("games.dk.parties", { re, kontra }),
        t("games.dk.cardPointsLine", { re: h.rePoints, kontra: 240 - h.rePoints }),
        ...items.map((i) => (i.points ? t("games.dk.itemLine", { text: i.text, n: i.points, party: party(i.party) }) : i.text)),
        t("games.dk.value", { n: Math.abs(h.value), solo: h.solo ? "yes" : "no" })],
      scores: h.scores.map(Number),
      scoreLabel: t("games.points"),
    };
  },
  sheet: (g, names) => sumSheet(names, g.history.map((h) => h.scores.map(Number)), t("games.deal")),
  get finalLabel() {
    return t("games.points");
  },
  progress: (g) => t("games.dk.progress", { n: Math.min(g.dealNumber + 1, g.deals), of: g.deals, target: g.targetPoints }),
};
