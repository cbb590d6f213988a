// Doppelkopf: the hand in the trump order of the game being played, the parties and every
// announcement as badges at their seats, the trick in front of the seats, the last trick on
// demand.
import { useState } from "preact/hooks";
import type { Face, FrenchRank, Suit } from "../cards/faces";
import { suitSymbol } from "../cards/faces";
import { CardRow, CentreLine } from "../table/bits";
import type { GameView } from "../gen/croupier/v1/croupier_pb";
import { DoppelkopfPhase, type DoppelkopfView } from "../gen/croupier/v1/doppelkopf_pb";
import { sumSheet } from "./sheet";
import type { GameModule, SeatNote } from "./types";

// engines/doppelkopf/moves.py CONTRACT_NAMES, in words
export const CONTRACTS = ["Normal game", "Marriage", "Diamond solo", "Heart solo", "Spade solo", "Club solo",
  "Queen solo", "Jack solo", "Ace solo (meatless)", "Pure club solo", "Pure spade solo", "Pure heart solo",
  "Pure diamond solo"];
const LEVELS = ["", "Re", "no 90", "no 60", "no 30", "schwarz"];

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
  if (m === "pass") return "No announcement now";
  const [party, ...rest] = m.split(" ");
  const who = party === "re" ? "Re" : "Kontra";
  return rest.length ? `${who}: ${rest.join(" ")}` : who;
}

function callLabel(m: string): string {
  if (m === "healthy") return "Healthy (no reservation)";
  if (m === "reservation") return "Reservation";
  if (m === "marriage") return "Marriage";
  const solo = m.match(/^solo (pure )?(\w+)$/);
  if (solo) {
    const names: Record<string, string> = { diamonds: "Diamond", hearts: "Heart", spades: "Spade", clubs: "Club",
      queens: "Queen", jacks: "Jack", aces: "Ace" };
    return `${solo[1] ? "Pure " + (names[solo[2]] ?? solo[2]).toLowerCase() : names[solo[2]] ?? solo[2]} solo`;
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
        {open ? "Hide last trick" : "Last trick"}
      </button>
      {open && (
        <div class="last-trick-cards">
          <CardRow cards={last.cards.split(" ")} face={face} back="french" small />
          <span> won by {names[last.winner]}</span>
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
    const party = g.parties[seat];
    if (party === 1) note.badges!.push("Re party");
    else if (party === 0) note.badges!.push("Kontra party");
    if (seat === g.declarer) note.badges!.push(g.contract === 1 ? "Bride" : "Soloist");
    if (seat === g.partner) note.badges!.push("Partner");
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
      if (!g.trick?.cards && open && open.winner === seat) note.badges!.push("Took the trick");
      if (g.points.length) note.text = `${g.points[seat]} card points`;
    }
    return note;
  },
  Centre: ({ g, names }) => (
    <div class="centre-doppelkopf">
      <CentreLine label="Game">{`${CONTRACTS[g.contract] ?? g.contract}${g.declarer >= 0 ? ` (${names[g.declarer]})` : ""}`}</CentreLine>
      {(g.reLevel > 0 || g.kontraLevel > 0) && (
        <CentreLine label="Announced">
          {[g.reLevel ? `Re ${LEVELS[g.reLevel] === "Re" ? "" : LEVELS[g.reLevel]}`.trim() : "",
            g.kontraLevel ? `Kontra ${LEVELS[g.kontraLevel] === "Re" ? "" : LEVELS[g.kontraLevel]}`.trim() : ""]
            .filter(Boolean).join(" · ")}
        </CentreLine>
      )}
      {g.toFollow && <CentreLine label="To follow">{g.toFollow}</CentreLine>}
      {g.phase === DoppelkopfPhase.PLAYING && <CentreLine label="Tricks">{`${g.tricks.length} of ${g.bistro ? 10 : 12}`}</CentreLine>}
      <LastTrick g={g} names={names} />
    </div>
  ),
  playLabel: () => "Play",
  hint: (g) => (g.toFollow ? `You must follow ${g.toFollow} if you can.` : ""),
  deals: (g) => g.history.length,
  summary: (g, deal, names) => {
    const h = g.history[deal];
    if (!h) return null;
    const re = h.reSeats.map((s) => names[s]).join(" and ");
    const title = h.noScore ? "No score" : h.winner === 1 ? `Re wins: ${re}` : h.winner === 0 ? "Kontra wins" : "Nobody wins";
    return {
      title,
      lines: [`${CONTRACTS[h.contract] ?? h.contract}${h.declarer >= 0 ? ` by ${names[h.declarer]}` : ""}`,
        `Re took ${h.rePoints} card points, Kontra ${240 - h.rePoints}`,
        ...h.items, `Game value: ${h.value}${h.solo ? " (×3 for the soloist)" : ""}`],
      scores: h.scores.map(Number),
      scoreLabel: "points",
    };
  },
  sheet: (g, names) => sumSheet(names, g.history.map((h) => h.scores.map(Number)), "Deal"),
  finalLabel: "points",
  progress: (g) => `Deal ${Math.min(g.dealNumber + 1, g.deals)} of ${g.deals}${g.targetPoints ? ` · to ${g.targetPoints}` : ""}`,
};
