// A table page: follows the table's event stream (resuming after a drop, with backoff; with
// the seats' presence), shows its events one after another at a pace a person can follow
// (queue.ts: cards fly from a seat to the felt, a trick to its winner; nothing skipped, caught
// up at once when behind), keeps every view it was sent so the game can be stepped through
// afterwards, and plays the seat this tab holds: by its seat token (a table joined without
// identity), or by the signed-in player's identity, which the server answers with the
// player's own seat from any tab or device. A move refused because another seat moved first is
// sent again at the new version if it is still legal and the seat's turn has not changed;
// otherwise the table is redrawn as it now is.
import { Code, ConnectError } from "@connectrpc/connect";
import type { JSX } from "preact";
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { api, auth, errorText, forgetSeat, joinTable, seatRefusal, tokenFor, type Held } from "../api";
import { ConnectionBanner, streamDown, streamUp } from "../connection";
import { currentPlayer, usePlayer } from "../players/session";
import { gameModule } from "../games";
import type { ClosedPlay, GameModule, SeatNote } from "../games/types";
import { t } from "../i18n";
import { EndReason, EventKind, SeatKind, TableStatus, type SeatInfo, type Table, type TableEvent, type TableView } from "../gen/croupier/v1/croupier_pb";
import { GameOver } from "./GameOver";
import { CallDialog, ChoiceDialog, DealSummaryDialog, LeaveDialog, SheetTable } from "./Dialogs";
import { Hand } from "./Hand";
import { matchSelection } from "./select";
import { Seat, type Timer } from "./Seat";
import { CardRow } from "./bits";
import { SoundIcon, TableHeader, TurnBanner } from "./Chrome";
import { EventQueue, type Step } from "./queue";
import { chime, flyIn, flyOut, pulse, reducedMotion, seatRect } from "./motion";

interface LogLine { version: bigint; kind: EventKind; seat: number; text: string; auto: boolean }

export function seatNames(tb: Table | undefined, mine: number | undefined): string[] {
  const raw = (tb?.seats ?? []).map((s, i) => s.name || (s.occupied ? t("table.seat.n", { n: i }) : t("table.seat.open", { n: i })));
  // two bots of one level share a name: the seat number (the API's, from 0) tells them apart
  const twice = (n: string) => raw.filter((x) => x === n).length > 1;
  return raw.map((n, i) => (i === mine ? t("table.seat.you", { name: n }) : twice(n) ? `${n} ${i}` : n));
}

function positions(n: number, clockwise: boolean): string[] {
  const around: Record<number, string[]> = {
    2: ["top"], 3: ["left", "right"], 4: ["left", "top", "right"], 5: ["left", "top", "top", "right"],
    6: ["left", "top", "top", "top", "right"],
  };
  const rest = around[n] ?? Array.from({ length: n - 1 }, () => "top");
  return ["bottom", ...(clockwise ? rest : [...rest].reverse())];
}

function logLine(e: TableEvent, game: GameModule<any> | undefined): LogLine {
  const names = seatNames(e.view?.table, e.view?.seat);
  const who = e.seat >= 0 ? names[e.seat] ?? t("table.seat.n", { n: e.seat }) : "";
  let text: string;
  if (e.kind === EventKind.MOVE) {
    const g = game?.unwrap(e.view?.view);
    const words = game && g !== undefined ? game.label(e.move, g, names) : e.move;
    text = e.auto ? t("table.log.auto", { who, move: words }) : t("table.log.move", { who, move: words });
  } else {
    const kinds: Record<number, string> = { [EventKind.CREATED]: t("table.log.created"), [EventKind.JOINED]: t("table.log.joined", { who }),
      [EventKind.LEFT]: t("table.log.left", { who }),
      [EventKind.END]: e.endReason === EndReason.ABANDONED ? t("table.log.abandoned") : t("table.log.over"),
      [EventKind.SEATS_OPENED]: t("table.log.bots"), [EventKind.DEAL_STARTS]: t("table.log.dealStarts"),
      [EventKind.READY]: t("table.log.ready", { who }) };
    text = kinds[e.kind] ?? t("table.log.event");
  }
  return { version: e.version, kind: e.kind, seat: e.seat, text, auto: e.auto };
}

const KIND_CLASS: Record<number, string> = { [EventKind.MOVE]: "move", [EventKind.END]: "end", [EventKind.JOINED]: "joined",
  [EventKind.LEFT]: "left", [EventKind.CREATED]: "created", [EventKind.SEATS_OPENED]: "seats_opened",
  [EventKind.DEAL_STARTS]: "deal_starts", [EventKind.READY]: "ready" };

// how long an event stays drawn before the next one (ms); `croupier.pace` in the browser's
// storage scales them (0.5: twice as fast)
const PACE_SET = Number(localStorage.getItem("croupier.pace") ?? "1");
const PACE = Number.isFinite(PACE_SET) && PACE_SET >= 0 ? PACE_SET : 1;
const MOVE_MS = 700 * PACE;      // a move of another seat
const CLOSE_MS = 1100 * PACE;    // a full trick (or round) on the felt before it is gathered
const END_MS = 1800 * PACE;      // the last trick of a deal before its summary
const OTHER_MS = 200 * PACE;     // joins, deal starts...
const FLY_MS = 400 * Math.min(PACE, 1); // a flight (slower paces do not slow the cards)

/** The cards a move cleared from the felt, where the game module says nothing: what each
 * seat had in front of it before, and the mover's own; gathered by the next seat on turn. */
function guessClosed(game: GameModule<any>, before: unknown, after: unknown, move: string, mover: number, n: number,
  names: string[], onTurn: number[]): ClosedPlay | null {
  const notes = (g: unknown) => Array.from({ length: n }, (_, s) => game.seat(g, s, names).played ?? []);
  const was = notes(before);
  const now = notes(after);
  if (now.some((c) => c.length)) return null; // something still lies there: nothing gathered
  const mine = game.plan(move, before)?.cards ?? [];
  const played = was.map((cards, seat) => ({ seat, cards: seat === mover && mine.length ? mine : cards })).filter((p) => p.cards.length);
  if (!mine.length || played.length < 2) return null;
  return { played, to: onTurn.length === 1 ? onTurn[0] : null };
}


/** The rule of common/resend.py, the one every client of ours follows (docs/frontends.md): a move
 * refused ABORTED is sent again only while it is still legal and the same seats are to act. */
const stillStands = (move: string, sentAt: TableView, fresh: TableView): boolean =>
  fresh.version > sentAt.version &&
  fresh.legalMoves.includes(move) &&
  [...fresh.onTurn].sort().join() === [...sentAt.onTurn].sort().join();

/** The table `tableId`; `plain`: drawn by the generic module, as a game without its own;
 * `seatLink`: the page was opened to take (or resume) that seat. */
export function TablePage({ tableId, plain = false, seatLink }: { tableId: string; plain?: boolean; seatLink?: number }): JSX.Element {
  // the seat this page plays: with a seat token of this tab's, or (token "") the seat the
  // signed-in player's identity holds, as the server's views say
  const [mine, setMine] = useState<Held | null>(() => tokenFor(tableId));
  const { me: player } = usePlayer();
  const [refusal, setRefusal] = useState("");
  const [refusalDetail, setRefusalDetail] = useState("");
  // reopens the stream (after taking a seat: the seat's view, its hand), from the last version
  const [streamKey, setStreamKey] = useState(0);
  const lastVersion = useRef(0n);
  const resumed = useRef(false);
  // each game's title as ListGames gives it: the table names no game itself
  const [titles, setTitles] = useState<Record<string, string>>({});
  useEffect(() => {
    api.listGames({}).then((r) => setTitles(Object.fromEntries(r.games.map((x) => [x.name, x.title]))), () => {});
  }, []);
  const [live, setLive] = useState<TableView>();
  const past = useRef<TableView[]>([]);
  const [log, setLog] = useState<LogLine[]>([]);
  const [pinned, setPinned] = useState(-1);
  const [error, setError] = useState("");
  const [notice, setNotice] = useState("");
  const [selected, setSelected] = useState<Set<number>>(new Set());
  const [target, setTarget] = useState<string>();
  const [choice, setChoice] = useState<string[] | null>(null);
  const [summaries, setSummaries] = useState<{ deal: number; view: TableView }[]>([]);
  const [panel, setPanel] = useState<"" | "log" | "scores">("");
  const [busy, setBusy] = useState(false);
  const [overOpen, setOverOpen] = useState(true);
  const [asking, setAsking] = useState(false);
  const [anytimeOpen, setAnytimeOpen] = useState(false);
  const [calling, setCalling] = useState<string | null>(null); // an announcement being confirmed
  // the player's own opt-in: end the turn when nothing else is left (kept by the browser)
  const [autoEnd, setAutoEnd] = useState(() => localStorage.getItem(AUTO_END_KEY) === "1");
  const [sound, setSound] = useState(() => localStorage.getItem(SOUND_KEY) === "1");
  const autoSent = useRef(-1n);
  const [lastEventAt, setLastEventAt] = useState(Date.now());
  // the server's time of that event: our own seat's deadline is counted from it, so a
  // browser clock that is off changes nothing
  const [lastEventTime, setLastEventTime] = useState(0);
  // a move the server played for this seat (its timer ran out), said on the table
  const [autoNote, setAutoNote] = useState("");
  // the cards a move gathered from the felt, on show before they go to their seat
  const [closing, setClosing] = useState<(ClosedPlay & { keep: boolean; leaving: boolean }) | null>(null);
  // the seats as the latest presence event has them (presence goes around the queue)
  const [presence, setPresence] = useState<SeatInfo[] | null>(null);
  const [, setQueueTick] = useState(0);
  const shown = useRef(-1n);
  const shownView = useRef<TableView>();
  const animateNext = useRef(false);
  const lastMove = useRef<{ seat: number; move: string } | null>(null);
  const arrived = useRef(new Map<bigint, number>());
  const mineRef = useRef(mine);
  mineRef.current = mine;
  const queueRef = useRef<EventQueue>();

  /** Draws the view `v` (the event `move` led to it, if a move). */
  const display = (v: TableView | undefined, move?: { seat: number; move: string; dealOver: boolean }, animate = false) => {
    if (!v || v.version < shown.current || (move && v.version === shown.current)) return;
    const before = shownView.current;
    shown.current = v.version;
    shownView.current = v;
    animateNext.current = animate;
    lastMove.current = move ? { seat: move.seat, move: move.move } : null;
    setLive(v);
    setPresence(null);
    // no seat token here: the view tells whether the player's identity holds a seat
    if (!mineRef.current?.token && currentPlayer()) {
      const held = mineRef.current;
      const next = v.seat !== undefined ? { seat: v.seat, token: "" } : null;
      if (held?.seat !== next?.seat) {
        mineRef.current = next;
        setMine(next);
      }
    }
    const game = v.table ? gameModule(v.table.game, plain) : undefined;
    if (!move || !before || !game) return;
    const gb = game.unwrap(before.view);
    const ga = game.unwrap(v.view);
    if (gb === undefined || ga === undefined) return;
    const n = v.table?.players ?? 0;
    const names = seatNames(v.table, v.seat);
    const waited = v.onTurn.length ? v.onTurn : v.toAct;
    const closed = game.closedPlay ? game.closedPlay(gb, ga, move.move, move.seat)
      : guessClosed(game, gb, ga, move.move, move.seat, n, names, move.dealOver ? [] : waited);
    if (!closed) {
      setClosing((c) => (c && !c.leaving ? null : c));
      return;
    }
    if (move.dealOver) {
      setClosing({ ...closed, to: null, keep: true, leaving: false }); // the deal's last trick stays on the felt
      return;
    }
    if (!animate) {
      setClosing(null);
      return;
    }
    setClosing({ ...closed, keep: false, leaving: false });
    queueRef.current?.hold("closing", true);
    setTimeout(() => {
      const to = closed.to !== null ? seatRect(closed.to) : null;
      const groups = [...document.querySelectorAll<HTMLElement>(".played-group.closing")];
      setClosing((c) => (c ? { ...c, leaving: true } : c));
      void Promise.all(groups.map((el) => flyOut(el, to, FLY_MS))).then(() => {
        setClosing((c) => (c && !c.keep ? null : c));
        queueRef.current?.hold("closing", false);
      });
    }, CLOSE_MS);
  };

  /** One event of the stream, in its turn: logged, kept for stepping back, drawn. */
  const playEvent = (event: TableEvent, animate: boolean, live: boolean): Step => {
    const game = gameModule(event.view?.table?.game ?? "", plain);
    if (event.view) past.current.push(event.view);
    setLog((l) => [...l, logLine(event, game)]);
    // the turn timers count from the event's arrival, not from when the queue drew it
    setLastEventAt(arrived.current.get(event.version) ?? Date.now());
    arrived.current.delete(event.version);
    setLastEventTime(event.time);
    const me = mineRef.current?.seat;
    if (event.kind === EventKind.MOVE && event.auto && me !== undefined && event.seat === me && live) {
      const g = game?.unwrap(event.view?.view);
      const names = seatNames(event.view?.table, me);
      setAutoNote(t("table.auto.played", { move: game && g !== undefined ? game.label(event.move, g, names) : event.move }));
    } else if (event.kind === EventKind.MOVE && me !== undefined && event.seat === me) setAutoNote("");
    if (event.kind === EventKind.DEAL_STARTS) setClosing(null);
    const mineAlready = event.kind === EventKind.MOVE && event.version <= shown.current;
    display(event.view, event.kind === EventKind.MOVE ? { seat: event.seat, move: event.move, dealOver: event.dealOver } : undefined, animate);
    const ms = !animate ? 0 : event.dealOver ? END_MS : event.kind === EventKind.MOVE ? (mineAlready ? 0 : MOVE_MS)
      : event.kind === EventKind.PRESENCE || event.kind === EventKind.READY ? 0 : OTHER_MS;
    if (event.dealOver && event.view && live && !event.view.result?.finished) {
      const g = game?.unwrap(event.view.view);
      if (game && g !== undefined) {
        const deal = game.deals(g) - 1;
        const v = event.view;
        return { ms: animate ? END_MS : 0, then: () => {
          setSummaries((s) => [...s, { deal, view: v }]);
          if (mineRef.current) queueRef.current?.hold("summary", true);
        } };
      }
    }
    return { ms };
  };
  const playRef = useRef(playEvent);
  playRef.current = playEvent;
  if (!queueRef.current) queueRef.current = new EventQueue((e, a, l) => playRef.current(e, a, l), () => setQueueTick((k) => k + 1));
  const queue = queueRef.current;
  useEffect(() => {
    // a tab brought back to the front draws the table as it now is
    const onVisible = () => {
      if (document.visibilityState === "visible") queue.flush();
    };
    document.addEventListener("visibilitychange", onVisible);
    return () => document.removeEventListener("visibilitychange", onVisible);
  }, []);

  /** A view that came with an answer (a move sent, GetView): drawn now if nothing waits. */
  const show = (v: TableView | undefined, move?: { seat: number; move: string }) => {
    if (!v || queue.busy) return;
    display(v, move ? { ...move, dealOver: false } : undefined, !!move && !reducedMotion());
  };
  /** Takes a seat from this page (a seat link, the player's own seat back, an open seat). */
  const sit = async (seat: number | undefined, link: boolean, at?: Table) => {
    setRefusal("");
    try {
      const got = await joinTable(tableId, seat, false);
      const held = tokenFor(tableId) ?? { seat: got, token: "" };
      mineRef.current = held;
      setMine(held);
      setError("");
      setStreamKey((k) => k + 1);
    } catch (err) {
      const owner = seat === undefined ? undefined : at?.seats[seat]?.name;
      const words = seatRefusal(err, seat, owner ? t("table.seat.another", { name: owner }) : undefined);
      if (words) {
        setRefusal(words);
        setRefusalDetail(errorText(err));
      }
      else setError(errorText(err));
    }
    if (link) history.replaceState(null, "", `#/table/${tableId}${plain ? "?plain" : ""}`);
  };
  const refresh = async () => {
    try {
      show(await api.getView({ tableId }, auth(mineRef.current?.token)));
    } catch {
      // the stream's own retries report a lost server
    }
  };

  useEffect(() => {
    const abort = new AbortController();
    let last = lastVersion.current;
    let liveFrom: bigint | undefined; // events after this version arrived while the page was open
    let delay = 1000;
    const run = async () => {
      try {
        const first = await api.getView({ tableId }, auth(mineRef.current?.token));
        liveFrom = first.version;
        if (!queue.busy) display(first);
        if (!resumed.current) {
          resumed.current = true;
          const tb = first.table;
          const open = tb && tb.status !== TableStatus.FINISHED && tb.status !== TableStatus.ABANDONED;
          const me = currentPlayer();
          // the player's own seat, left empty (a seat kept for them): taken back at once
          const kept = me && !mineRef.current && open ? tb.seats.findIndex((x) => !x.occupied && x.playerId === me.playerId) : -1;
          if (seatLink !== undefined && mineRef.current?.seat !== seatLink && open) void sit(seatLink, true, tb);
          else if (kept >= 0) void sit(kept, false);
          else if (seatLink !== undefined) history.replaceState(null, "", `#/table/${tableId}${plain ? "?plain" : ""}`);
        }
      } catch {
        liveFrom = liveFrom ?? 0n;
      }
      while (!abort.signal.aborted) {
        try {
          for await (const event of api.streamTable({ tableId, fromVersion: last, presence: true },
            { ...auth(mineRef.current?.token), signal: abort.signal })) {
            streamUp();
            delay = 1000;
            if (event.kind === EventKind.PRESENCE) {
              // the seats' presence: the table's log and history do not change
              if (event.view?.table) setPresence(event.view.table.seats);
              continue;
            }
            last = event.version;
            lastVersion.current = last;
            arrived.current.set(event.version, Date.now());
            queue.push(event, liveFrom !== undefined && event.version > liveFrom);
            if (event.kind === EventKind.END) return;
          }
          return;
        } catch (err) {
          if (abort.signal.aborted) return;
          if (err instanceof ConnectError) {
            if (err.code === Code.PermissionDenied && mineRef.current) {
              // the token no longer holds a seat here (given up, or taken over): watch instead
              forgetSeat(tableId);
              mineRef.current = null;
              setMine(null);
              continue;
            }
            if ([Code.NotFound, Code.PermissionDenied, Code.Unauthenticated].includes(err.code)) {
              setError(errorText(err));
              return;
            }
            if (err.code === Code.InvalidArgument) {
              last = 0n; // asked to resume past the table's version: replay it from the start
              lastVersion.current = 0n;
              shown.current = -1n;
              past.current = [];
              queue.clear();
              setLog([]);
              setPinned(-1);
            }
          }
          // the server is out of reach (restarting, the network): said by the banner, in words
          streamDown();
        }
        await new Promise((r) => setTimeout(r, delay * (0.5 + Math.random() / 2)));
        delay = Math.min(delay * 2, 30_000);
      }
    };
    void run();
    return () => abort.abort();
  }, [tableId, streamKey]);

  // cards fly from their seat to the felt, a new hand comes from the centre, a count that
  // changed pulses: measured after Preact has drawn the table as it now is
  const playedKeys = useRef<Record<number, string>>({});
  const handCodes = useRef<string[]>([]);
  const counts = useRef<number[]>([]);
  useLayoutEffect(() => {
    const animate = animateNext.current && !reducedMotion();
    animateNext.current = false;
    const groups = [...document.querySelectorAll<HTMLElement>(".played-group:not(.closing)[data-seat]")];
    const keys: Record<number, string> = {};
    for (const el of groups) {
      const s = Number(el.dataset.seat);
      keys[s] = el.dataset.cards ?? "";
      if (animate && keys[s] && playedKeys.current[s] !== keys[s]) {
        const from = seatRect(s);
        if (from) flyIn(el, from, FLY_MS);
      }
    }
    playedKeys.current = keys;
    // a game whose moves land elsewhere (onto a centre card) names the place
    const moved = lastMove.current;
    const shownGame = live?.table ? gameModule(live.table.game, plain) : undefined;
    const after = shownGame?.unwrap(live?.view);
    if (animate && moved && shownGame?.moveTarget && after !== undefined) {
      const where = shownGame.moveTarget(moved.move, after);
      const el = where ? document.querySelector<HTMLElement>(where) : null;
      const from = seatRect(moved.seat);
      if (el && from) flyIn(el, from, FLY_MS);
    }
    const cards = [...document.querySelectorAll<HTMLElement>(".hand-card")];
    const codes = cards.map((c) => c.dataset.card ?? "");
    const centre = document.querySelector("#centre")?.getBoundingClientRect();
    if (animate && centre && codes.length > 0) {
      const left = [...handCodes.current];
      const fresh = cards.filter((c) => {
        const i = left.indexOf(c.dataset.card ?? "");
        if (i >= 0) left.splice(i, 1);
        return i < 0;
      });
      const dealt = fresh.length >= 5;
      fresh.forEach((el, i) => flyIn(el, centre, (dealt ? 320 : 420) * Math.min(PACE, 1), dealt ? i * 35 * Math.min(PACE, 1) : 0));
    }
    handCodes.current = codes;
    const pills = [...document.querySelectorAll<HTMLElement>(".seat[data-seat] .cards-left")];
    const now = pills.map((p) => Number(p.textContent));
    if (animate) pills.forEach((p, i) => counts.current[i] !== undefined && counts.current[i] < now[i] && pulse(p));
    counts.current = now;
  }, [live?.version]);

  const isLive = pinned < 0;
  const v = isLive ? live : past.current[pinned];
  const table = v?.table;
  const game = table ? gameModule(table.game, plain) : undefined;
  const g = game?.unwrap(v?.view);
  const seat = mine && v?.seat !== undefined ? v.seat : mine?.seat;
  const names = seatNames(table, mine ? seat : undefined);
  const hand = useMemo(() => (game && g !== undefined && mine ? game.hand(g) : []), [v, game, mine]);
  const handKey = hand.map((c) => c.code).join(" ");
  useEffect(() => {
    setSelected(new Set());
    setTarget(undefined);
  }, [handKey, v?.table?.game]);

  // the table shown is the table as it is: nothing waits in the queue, no trick on show
  const settled = !queue.busy && !(closing && !closing.keep);
  const legal = isLive && mine && v && settled ? v.legalMoves : [];
  const myTurnNow = !!mine && seat !== undefined && !!v && isLive && v.onTurn.includes(seat) && !v.result?.finished
    && legal.length > 0;
  // the turn said by more than a border: a chime (the player's opt-in) and the tab's title
  const wasMyTurn = useRef(false);
  useEffect(() => {
    if (myTurnNow && !wasMyTurn.current && sound) chime();
    wasMyTurn.current = myTurnNow;
    const base = document.title.replace(/^\(!\) .*? · /, "");
    document.title = myTurnNow && document.visibilityState === "hidden" ? `(!) ${t("table.turn.yours")} · ${base}` : base;
    const back = () => {
      if (document.visibilityState === "visible") document.title = document.title.replace(/^\(!\) .*? · /, "");
    };
    document.addEventListener("visibilitychange", back);
    return () => document.removeEventListener("visibilitychange", back);
  }, [myTurnNow, sound]);
  useEffect(() => {
    if (!autoNote) return undefined;
    const id = setTimeout(() => setAutoNote(""), 12_000);
    return () => clearTimeout(id);
  }, [autoNote]);
  const toggle = (i: number) => {
    setNotice("");
    setSelected((s) => {
      const n = new Set(s);
      if (n.has(i)) n.delete(i);
      else n.add(i);
      return n;
    });
  };

  const send = async (move: string) => {
    if (!v || !mine) return;
    setBusy(true);
    setNotice("");
    setAutoNote("");
    let at = v;
    try {
      for (let attempt = 0; attempt < 3; attempt++) {
        try {
          const reply = await api.submitMove({ tableId, move, expectedVersion: at.version }, auth(mine.token));
          setError("");
          setSelected(new Set());
          setTarget(undefined);
          show(reply.view, { seat: mine.seat, move: reply.move });
          return;
        } catch (err) {
          if (err instanceof ConnectError && err.code === Code.Aborted) {
            const fresh = await api.getView({ tableId }, auth(mine.token));
            show(fresh);
            if (stillStands(move, at, fresh)) {
              at = fresh;
              continue;
            }
            setNotice(t("table.notice.movedFirst"));
            return;
          }
          setError(errorText(err));
          await refresh();
          return;
        }
      }
      setNotice(t("table.notice.keepsChanging"));
    } finally {
      setBusy(false);
    }
  };

  const autoMove = autoEnd && !busy && game?.autoEnd && g !== undefined ? game.autoEnd(legal, g) : undefined;
  useEffect(() => {
    if (!autoMove || !v || autoSent.current === v.version) return;
    autoSent.current = v.version; // once a version: a refusal is shown, not sent again
    void send(autoMove);
  }, [autoMove, v?.version]);
  const switchAutoEnd = (on: boolean) => {
    setAutoEnd(on);
    localStorage.setItem(AUTO_END_KEY, on ? "1" : "0");
  };
  const switchSound = (on: boolean) => {
    setSound(on);
    localStorage.setItem(SOUND_KEY, on ? "1" : "0");
    if (on) chime(); // the player hears what they switched on (and the browser allows sound)
  };

  const play = () => {
    if (!game || g === undefined || !legal.length || busy) return;
    const picked = [...selected].sort((a, b) => a - b).map((i) => hand[i]?.code).filter(Boolean);
    const m = matchSelection(game, g, legal, picked, target);
    if (m.kind === "none") setNotice(m.reason);
    else if (m.kind === "several") setChoice(m.moves);
    else void send(m.move);
  };

  const leave = async () => {
    setAsking(false);
    try {
      await api.leaveTable({ tableId }, auth(mine?.token));
      forgetSeat(tableId);
      location.hash = "#/";
    } catch (err) {
      setError(errorText(err));
    }
  };

  /** The summary read: the queue goes on; during the server's pause, this seat is ready. */
  const closeSummary = () => {
    setSummaries((q) => q.slice(1));
    if (summaries.length <= 1) queue.hold("summary", false);
    const now = live;
    if (mine && now && now.nextDealAt * 1000 > Date.now()) {
      api.readyForNextDeal({ tableId }, auth(mine.token)).then(() => {}, () => {});
    }
  };

  if (!v || !table) {
    return (
      <div class="table-page loading">
        <header class="table-header"><a href="#/" class="back">← {t("table.back")}</a>
          <div id="role">{mine ? t("table.role.taking") : t("table.role.spectator")}</div></header>
        <ConnectionBanner />
        {refusal && <div class="refusal" id="refusal" role="alert">{refusal}</div>}
        {error ? <div class="error" role="alert">{error}</div> : <p class="muted">{t("table.loading")}</p>}
      </div>
    );
  }

  const n = table.players;
  const me = seat ?? 0;
  const clockwise = game?.clockwise ?? true;
  const order = Array.from({ length: n }, (_, k) => (me + k) % n);
  const pos = positions(n, clockwise);
  const waited = v.onTurn.length ? v.onTurn : v.toAct;
  const finished = !!v.result?.finished;
  const turnSeconds = Number((table.options as Record<string, unknown> | undefined)?.turn_seconds ?? 0);
  const timer = (s: number): Timer | undefined => {
    if (!(turnSeconds > 0 && isLive && !finished && waited.includes(s))) return undefined;
    const passed = (Date.now() - lastEventAt) / 1000;
    // our seat: the server's deadline, which counts what is left of a match budget too
    const allowed = s === seat && v.deadline > 0 && lastEventTime > 0 ? v.deadline - lastEventTime : turnSeconds;
    const seconds = Math.max(allowed, 0.001);
    return { seconds, left: Math.min(seconds, Math.max(0, seconds - passed)) };
  };
  const myTimer = seat !== undefined ? timer(seat) : undefined;
  const sizes = game && g !== undefined ? game.handSizes(g) : [];
  // the server deals when the last seat is taken: before that the view is empty, not a deal
  const abandoned = table.status === TableStatus.ABANDONED;
  const undealt = table.status === TableStatus.WAITING || (abandoned && !sizes.some((x) => x > 0));
  const dealt = game && g !== undefined && !undealt;
  const totals = v.result?.totals ?? [];
  const notes: SeatNote[] = Array.from({ length: n }, (_, s) => (dealt ? game.seat(g, s, names) : {}));
  const seatBox = (s: number, where: string) => (
    <Seat key={s} info={presence?.[s] ?? table.seats[s]} index={s} name={names[s].replace(/ \(.*\)$/, "")} position={where}
      mine={!!mine && s === seat} compact={where !== "bottom" && n >= 4}
      note={notes[s]} cardsLeft={undealt ? undefined : sizes[s]} onTurn={waited.includes(s) && !finished}
      back={game?.back ?? "french"} timer={timer(s)}
      score={undealt ? undefined : dealt && game.seatScore ? game.seatScore(g, s)
        : totals[s] !== undefined ? String(totals[s]) : undefined} />
  );
  // what each seat last played lies on the felt between it and the centre; a trick just
  // gathered stays there a moment (and the last of a deal until the next deal starts)
  const played = (s: number) => {
    if (!game) return null;
    const gathered = isLive && closing ? closing.played.find((p) => p.seat === s) : undefined;
    const cards = closing && isLive ? gathered?.cards : notes[s].played;
    if (!cards?.length) return null;
    return (
      <div class={`played-group ${gathered ? "closing" : ""} ${gathered && closing?.to === s ? "winner" : ""}`} data-seat={s}
        data-cards={cards.join(" ")} key={`${s}-${gathered ? "c" : "p"}`}>
        <CardRow cards={cards} face={game.face} back={game.back} small cls="played-cards" />
        <span class="played-by">{names[s].replace(/ \(.*\)$/, "")}</span>
      </div>
    );
  };
  const others = order.slice(1).map((s, k) => ({ s, where: pos[k + 1] }));
  const cardMoves = game && g !== undefined ? legal.filter((m) => game.plan(m, g)) : [];
  const turnButtons = game && g !== undefined ? legal.filter((m) => !game.plan(m, g) && !game.outOfTurn(m, g)) : legal;
  const anytime = game && g !== undefined ? legal.filter((m) => !game.plan(m, g) && game.outOfTurn(m, g)) : [];
  const label = (m: string) => (game && g !== undefined ? game.label(m, g, names) : m);
  const myTurn = !!mine && seat !== undefined && v.onTurn.includes(seat);
  // the deal's last trick (or play), as it lay on the felt: in the summary and the final screen
  const lastFelt = closing?.keep && game ? closing.played.map((p) => (
    <div class="played-group" key={p.seat}>
      <CardRow cards={p.cards} face={game.face} back={game.back} small cls="played-cards" />
      <span class="played-by">{names[p.seat]}</span>
    </div>)) : undefined;
  const summary = summaries[0];
  const summaryGame = summary ? game?.unwrap(summary.view.view) : undefined;
  const title = titles[table.game] ?? table.game;
  const paused = isLive && v.nextDealAt * 1000 > Date.now();
  const progress = [dealt ? game.progress(g) : "", table.status === TableStatus.WAITING ? t("table.status.waiting") : "",
    abandoned ? t("table.status.abandoned") : ""].filter(Boolean).join(" · ");
  const role = mine ? <span class="role-text">{t("table.role.you", { name: table.seats[me]?.name || t("table.role.youPlain") })}</span>
    : <span>{t("table.role.spectator")}</span>;

  return (
    <div class="table-page" id="table-page">
      <TableHeader title={title} game={table.game} progress={progress} role={role} mine={mine ? String(seat) : ""}
        canLeave={!!mine && !finished && !abandoned} onLeave={() => setAsking(true)} panel={panel} onPanel={setPanel}
        sound={sound} onSound={switchSound} />
      <ConnectionBanner />
      {error && <div class="error" role="alert">{error}</div>}
      {refusal && (
        <div class="refusal" id="refusal" role="alert" title={refusalDetail}>
          <span>{refusal}</span>
          <button type="button" class="small-button" onClick={() => setRefusal("")} aria-label={t("table.dismiss")}>{t("table.ok")}</button>
        </div>
      )}
      {!isLive && (
        <div id="replay" role="status">
          <span>{t("table.replay.at", { n: pinned + 1, of: past.current.length })}</span>
          <button type="button" id="replay-prev" class="small-button" disabled={pinned <= 0} onClick={() => setPinned(pinned - 1)}
            aria-label={t("table.replay.prev")}>◀</button>
          <button type="button" id="replay-next" class="small-button" disabled={pinned + 1 >= past.current.length}
            onClick={() => setPinned(pinned + 1)} aria-label={t("table.replay.next")}>▶</button>
          <button type="button" id="replay-live" class="small-button" onClick={() => setPinned(-1)}>{t("table.replay.live")}</button>
        </div>
      )}
      <main id="table" data-version={String(v.version)} data-legal={JSON.stringify(legal)} data-status={TableStatus[table.status]}
        data-seats={n} data-on-turn={JSON.stringify(finished ? [] : waited)} data-settled={settled ? "1" : "0"}
        data-received={queue.received} data-processed={queue.processed} data-caught-up={queue.caughtUp}
        class={myTurnNow ? "my-turn" : ""}>
        <section class={`felt players-${n}`}>
          <div class="opponents">
            <div class="side left">{others.filter((o) => o.where === "left").map((o) => seatBox(o.s, "left"))}</div>
            <div class="top">{others.filter((o) => o.where === "top").map((o) => seatBox(o.s, "top"))}</div>
            <div class="side right">{others.filter((o) => o.where === "right").map((o) => seatBox(o.s, "right"))}</div>
          </div>
          <div id="centre" class="centre">
            <div class="played-opponents">
              <div class="played played-left">{others.filter((o) => o.where === "left").map((o) => played(o.s))}</div>
              <div class="played played-top">{others.filter((o) => o.where === "top").map((o) => played(o.s))}</div>
              <div class="played played-right">{others.filter((o) => o.where === "right").map((o) => played(o.s))}</div>
            </div>
            <div class="centre-info">
              {dealt ? game.Centre({ g, view: v, names, target, onTarget: (c) => { setNotice(""); setTarget(c); } })
                : undealt ? (
                  <div id="not-dealt" class="not-dealt" role="status">
                    {abandoned ? t("table.notDealt.abandoned")
                      : t("table.notDealt.waiting", { taken: table.seats.filter((x) => x.occupied).length, n })}
                  </div>
                ) : null}
              {paused && !summary && <div class="pause-note" role="status">{t("table.pause")}</div>}
            </div>
            <div class="played played-bottom">{played(me)}</div>
          </div>
        </section>
        <section class="my-area">
          {myTurnNow && <TurnBanner until={myTimer ? Date.now() + myTimer.left * 1000 : 0} />}
          {autoNote && <div class="auto-note" id="auto-note" role="status">{autoNote}</div>}
          {seatBox(me, "bottom")}
          {!mine && (
            <div class="spectating">{t("table.watching")} {table.seats.some((s) => s.kind === SeatKind.HUMAN && !s.occupied
              && (!s.playerId || s.playerId === player?.playerId)) && !finished && !abandoned
              ? <button type="button" class="small-button" id="take-seat" onClick={() => void sit(undefined, false)}>{t("table.takeSeat")}</button> : null}</div>
          )}
          {mine && game && (
            <Hand cards={hand} back={game.back} selected={selected} onToggle={toggle} onPlay={play} enabled
              play={isLive && !finished && g !== undefined ? { game, g, legal, names, target, busy,
                select: (s) => { setNotice(""); setSelected(s); }, send: (m) => void send(m) } : undefined} />
          )}
          {mine && isLive && !finished && (
            <div id="actions" class="actions">
              {notice && <div id="notice" class="notice" role="alert">{notice}</div>}
              {anytime.length > 0 && (
                <div class="action-row anytime" aria-label={t("table.anytime.label")}>
                  {anytime.length > 2 ? (
                    // many calls (announcements): one button, apart from the hand's
                    <button type="button" id="anytime-toggle" class="move out-of-turn" aria-expanded={anytimeOpen}
                      onClick={() => setAnytimeOpen(!anytimeOpen)}>{t("table.anytime.more", { n: anytime.length })}</button>
                  ) : <span class="anytime-word">{t("table.anytime")}</span>}
                  {(anytime.length <= 2 || anytimeOpen) && anytime.map((m) => (
                    <button type="button" class="move out-of-turn" data-move={m} key={m}
                      onClick={() => { setAnytimeOpen(false); setCalling(m); }}>{label(m)}</button>
                  ))}
                </div>
              )}
              <div class="action-row">
                {cardMoves.length > 0 && (
                  <button type="button" id="play" class="primary" disabled={busy} onClick={play}>
                    {game && g !== undefined ? game.playLabel(g) : t("table.play")}{selected.size ? ` (${selected.size})` : ""}
                  </button>
                )}
                {cardMoves.length > 0 && selected.size > 0 && (
                  <button type="button" id="clear" class="secondary" onClick={() => { setSelected(new Set()); setTarget(undefined); setNotice(""); }}>{t("table.clear")}</button>
                )}
                {turnButtons.map((m) => (
                  <button type="button" class="move" data-move={m} key={m} disabled={busy} onClick={() => void send(m)}>{label(m)}</button>
                ))}
                {!legal.length && !anytime.length && (
                  <span class="waiting">{waited.length && settled ? t("table.waitingFor", { names: waited.map((s) => names[s]).join(", ") }) : ""}</span>
                )}
              </div>
              {game?.autoEnd && (
                <label class="auto-end">
                  <input type="checkbox" id="auto-end" checked={autoEnd}
                    onChange={(e) => switchAutoEnd(e.currentTarget.checked)} />
                  {t("table.autoEnd")}
                </label>
              )}
              {myTurn && cardMoves.length > 0 && !selected.size && !notice && (
                <div class="hint muted">{game?.pickFirst ? t("table.hint.first", { first: game.pickFirst, play: game && g !== undefined ? game.playLabel(g) : t("table.play") })
                  : t("table.hint", { play: game && g !== undefined ? game.playLabel(g) : t("table.play") })}</div>
              )}
            </div>
          )}
        </section>
      </main>
      <aside id="side-panel" class="side-panel" hidden={!panel}>
        <div class="panel-head">
          <div class="panel-tabs" role="tablist">
            <button type="button" role="tab" id="tab-log" class="small-button" aria-selected={panel === "log"} onClick={() => setPanel("log")}>{t("table.panel.moves")}</button>
            <button type="button" role="tab" id="tab-scores" class="small-button" aria-selected={panel === "scores"} onClick={() => setPanel("scores")}>{t("table.panel.scores")}</button>
          </div>
          <button type="button" class="small-button icon-button sound-in-panel" aria-pressed={sound} onClick={() => switchSound(!sound)}
            aria-label={sound ? t("table.sound.on") : t("table.sound.off")}><SoundIcon on={sound} /></button>
          <button type="button" class="small-button close" onClick={() => setPanel("")} aria-label={t("table.panel.close")}>✕</button>
        </div>
        <div hidden={panel !== "scores"}>
          <h2>{t("table.panel.sheet")}</h2>
          {game && g !== undefined && <SheetTable sheet={game.sheet(g, names)} />}
        </div>
        <div hidden={panel !== "log"}>
          <h2>{t("table.panel.moves")}</h2>
          {v.commitment?.sha256 && (
            <p class="commitment muted" id="commitment" data-sha256={v.commitment.sha256}>
              {t("table.commitment.before")} <code title={v.commitment.sha256}>{v.commitment.sha256.slice(0, 16)}…</code>.
              {" "}{t("table.commitment.after")}
            </p>
          )}
          <p class="muted">{t("table.log.help")}</p>
          <ol id="log" onClick={(e) => {
            const line = (e.target as HTMLElement).closest<HTMLElement>("li[data-version]");
            const at = line ? past.current.findIndex((p) => String(p.version) === line.dataset.version) : -1;
            if (at >= 0) setPinned(at);
          }}>
            {log.map((l) => (
              <li key={String(l.version)} data-version={String(l.version)}
                class={`event event-${KIND_CLASS[l.kind] ?? "event"} ${l.auto ? "auto" : ""} ${!isLive && past.current[pinned]?.version === l.version ? "pinned" : ""}`}>
                {l.text}
              </li>
            ))}
          </ol>
        </div>
      </aside>
      {choice && (
        <ChoiceDialog moves={choice} label={label} onCancel={() => setChoice(null)}
          onPick={(m) => { setChoice(null); void send(m); }} />
      )}
      {calling && anytime.includes(calling) && <CallDialog label={label(calling)}
        onCall={() => { const m = calling; setCalling(null); void send(m); }} onCancel={() => setCalling(null)} />}
      {asking && <LeaveDialog onLeave={() => void leave()} onStay={() => setAsking(false)} />}
      {isLive && summary && game && summaryGame !== undefined && !finished && (() => {
        const s = game.summary(summaryGame, summary.deal, names);
        if (!s) {
          setTimeout(closeSummary, 0);
          return null;
        }
        return (
          <DealSummaryDialog deal={summary.deal} summary={s} names={names} sheet={game.sheet(summaryGame, names)} blocking={!!mine}
            nextAt={summary.view.nextDealAt * 1000} onClose={closeSummary}
            felt={lastFelt} faces={game} />
        );
      })()}
      {isLive && finished && settled && game && g !== undefined && (
        <GameOver view={v} game={game} g={g} names={names} mine={mine ? me : null} open={overOpen} felt={lastFelt}
          onToggle={() => setOverOpen(!overOpen)} onError={(e) => setError(e)} />
      )}
    </div>
  );
}

const AUTO_END_KEY = "croupier.autoEnd";
const SOUND_KEY = "croupier.sound";
