// A table page: follows the table's event stream (resuming after a drop, with backoff; with
// the seats' presence), keeps every view it was sent so the game can be stepped through
// afterwards, and plays the seat this tab holds: by its seat token (a table joined without
// identity), or by the signed-in player's identity, which the server answers with the
// player's own seat from any tab or device. A move refused because another seat moved first is
// sent again at the new version if it is still legal and the seat's turn has not changed;
// otherwise the table is redrawn as it now is.
import { Code, ConnectError } from "@connectrpc/connect";
import type { JSX } from "preact";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { api, auth, errorText, forgetSeat, joinTable, seatRefusal, tokenFor, type Held } from "../api";
import { currentPlayer, usePlayer } from "../players/session";
import { gameModule } from "../games";
import type { GameModule } from "../games/types";
import { EndReason, EventKind, SeatKind, TableStatus, type Table, type TableEvent, type TableView } from "../gen/croupier/v1/croupier_pb";
import { GameOver } from "./GameOver";
import { ChoiceDialog, DealSummaryDialog, SheetTable } from "./Dialogs";
import { Hand } from "./Hand";
import { matchSelection } from "./select";
import { Seat, type Timer } from "./Seat";
import { CardRow } from "./bits";

interface LogLine { version: bigint; kind: EventKind; seat: number; text: string; auto: boolean }

export function seatNames(t: Table | undefined, mine: number | undefined): string[] {
  const raw = (t?.seats ?? []).map((s, i) => s.name || (s.occupied ? `Seat ${i}` : `Seat ${i} (open)`));
  // two bots of one level share a name: the seat number (the API's, from 0) tells them apart
  const twice = (n: string) => raw.filter((x) => x === n).length > 1;
  return raw.map((n, i) => (i === mine ? `${n} (you)` : twice(n) ? `${n} ${i}` : n));
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
  const who = e.seat >= 0 ? names[e.seat] ?? `Seat ${e.seat}` : "";
  let text: string;
  if (e.kind === EventKind.MOVE) {
    const g = game?.unwrap(e.view?.view);
    const words = game && g !== undefined ? game.label(e.move, g, names) : e.move;
    text = `${who}: ${words}${e.auto ? " (played by the server: time ran out)" : ""}`;
  } else {
    const kinds: Record<number, string> = { [EventKind.CREATED]: "Table created", [EventKind.JOINED]: `${who} sat down`,
      [EventKind.LEFT]: `${who} left`, [EventKind.END]: e.endReason === EndReason.ABANDONED ? "Closed as abandoned: nobody came back" : "The match is over", [EventKind.SEATS_OPENED]: "Bots took the open seats" };
    text = kinds[e.kind] ?? "event";
  }
  return { version: e.version, kind: e.kind, seat: e.seat, text, auto: e.auto };
}

const KIND_CLASS: Record<number, string> = { [EventKind.MOVE]: "move", [EventKind.END]: "end", [EventKind.JOINED]: "joined",
  [EventKind.LEFT]: "left", [EventKind.CREATED]: "created", [EventKind.SEATS_OPENED]: "seats_opened" };

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
  // the player's own opt-in: end the turn when nothing else is left (kept by the browser)
  const [autoEnd, setAutoEnd] = useState(() => localStorage.getItem(AUTO_END_KEY) === "1");
  const autoSent = useRef(-1n);
  const [lastEventAt, setLastEventAt] = useState(Date.now());
  // the server's time of that event: our own seat's deadline is counted from it, so a
  // browser clock that is off changes nothing
  const [lastEventTime, setLastEventTime] = useState(0);
  const shown = useRef(-1n);
  const mineRef = useRef(mine);
  mineRef.current = mine;

  const show = (v: TableView | undefined) => {
    if (!v || v.version < shown.current) return;
    shown.current = v.version;
    setLive(v);
    // no seat token here: the view tells whether the player's identity holds a seat
    if (!mineRef.current?.token && currentPlayer()) {
      const held = mineRef.current;
      const next = v.seat !== undefined ? { seat: v.seat, token: "" } : null;
      if (held?.seat !== next?.seat) {
        mineRef.current = next;
        setMine(next);
      }
    }
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
      const words = seatRefusal(err, seat, owner ? `another player (${owner})` : undefined);
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
    let failed = false;
    const run = async () => {
      try {
        const first = await api.getView({ tableId }, auth(mineRef.current?.token));
        liveFrom = first.version;
        show(first);
        if (!resumed.current) {
          resumed.current = true;
          const t = first.table;
          const open = t && t.status !== TableStatus.FINISHED && t.status !== TableStatus.ABANDONED;
          const me = currentPlayer();
          // the player's own seat, left empty (a seat kept for them): taken back at once
          const kept = me && !mineRef.current && open ? t.seats.findIndex((x) => !x.occupied && x.playerId === me.playerId) : -1;
          if (seatLink !== undefined && mineRef.current?.seat !== seatLink && open) void sit(seatLink, true, t);
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
            if (failed) {
              setError("");
              failed = false;
            }
            delay = 1000;
            if (event.kind === EventKind.PRESENCE) {
              show(event.view); // the seats' presence: the table's log and history do not change
              continue;
            }
            last = event.version;
            lastVersion.current = last;
            const game = gameModule(event.view?.table?.game ?? "", plain);
            if (event.view) past.current.push(event.view);
            setLog((l) => [...l, logLine(event, game)]);
            setLastEventAt(Date.now());
            setLastEventTime(event.time);
            show(event.view);
            if (event.dealOver && event.view && liveFrom !== undefined && event.version > liveFrom && !event.view.result?.finished) {
              const g = game?.unwrap(event.view.view);
              if (game && g !== undefined) {
                const deal = game.deals(g) - 1;
                setSummaries((s) => [...s, { deal, view: event.view! }]);
              }
            }
            if (event.kind === EventKind.END) return;
          }
          return;
        } catch (err) {
          if (abort.signal.aborted) return;
          setError(errorText(err));
          failed = true;
          if (err instanceof ConnectError) {
            if (err.code === Code.PermissionDenied && mineRef.current) {
              // the token no longer holds a seat here (given up, or taken over): watch instead
              forgetSeat(tableId);
              mineRef.current = null;
              setMine(null);
              continue;
            }
            if ([Code.NotFound, Code.PermissionDenied, Code.Unauthenticated].includes(err.code)) return;
            if (err.code === Code.InvalidArgument) {
              last = 0n; // asked to resume past the table's version: replay it from the start
              lastVersion.current = 0n;
              shown.current = -1n;
              past.current = [];
              setLog([]);
              setPinned(-1);
            }
          }
        }
        await new Promise((r) => setTimeout(r, delay * (0.5 + Math.random() / 2)));
        delay = Math.min(delay * 2, 30_000);
      }
    };
    void run();
    return () => abort.abort();
  }, [tableId, streamKey]);

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

  const legal = isLive && mine && v ? v.legalMoves : [];
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
    let at = v;
    try {
      for (let attempt = 0; attempt < 3; attempt++) {
        try {
          const reply = await api.submitMove({ tableId, move, expectedVersion: at.version }, auth(mine.token));
          setError("");
          setSelected(new Set());
          setTarget(undefined);
          show(reply.view);
          return;
        } catch (err) {
          if (err instanceof ConnectError && err.code === Code.Aborted) {
            const fresh = await api.getView({ tableId }, auth(mine.token));
            show(fresh);
            if (stillStands(move, at, fresh)) {
              at = fresh;
              continue;
            }
            setNotice("Another seat moved first: the table has changed, look again.");
            return;
          }
          setError(errorText(err));
          await refresh();
          return;
        }
      }
      setNotice("The table keeps changing: try again.");
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

  const play = () => {
    if (!game || g === undefined || !legal.length || busy) return;
    const picked = [...selected].sort((a, b) => a - b).map((i) => hand[i]?.code).filter(Boolean);
    const m = matchSelection(game, g, legal, picked, target);
    if (m.kind === "none") setNotice(m.reason);
    else if (m.kind === "several") setChoice(m.moves);
    else void send(m.move);
  };

  const leave = async () => {
    try {
      await api.leaveTable({ tableId }, auth(mine?.token));
      forgetSeat(tableId);
      location.hash = "#/";
    } catch (err) {
      setError(errorText(err));
    }
  };

  if (!v || !table) {
    return (
      <div class="table-page loading">
        <header class="table-header"><a href="#/" class="back">← Lobby</a>
          <div id="role">{mine ? "Taking your seat…" : "Spectator"}</div></header>
        {refusal && <div class="refusal" id="refusal" role="alert">{refusal}</div>}
        {error ? <div class="error" role="alert">{error}</div> : <p class="muted">Loading the table…</p>}
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
  const sizes = game && g !== undefined ? game.handSizes(g) : [];
  // the server deals when the last seat is taken: before that the view is empty, not a deal
  const abandoned = table.status === TableStatus.ABANDONED;
  const undealt = table.status === TableStatus.WAITING || (abandoned && !sizes.some((x) => x > 0));
  const dealt = game && g !== undefined && !undealt;
  const totals = v.result?.totals ?? [];
  const notes = Array.from({ length: n }, (_, s) => (dealt ? game.seat(g, s, names) : {}));
  const seatBox = (s: number, where: string) => (
    <Seat key={s} info={table.seats[s]} index={s} name={names[s].replace(/ \(you\)$/, "")} position={where} mine={!!mine && s === seat}
      note={notes[s]} cardsLeft={undealt ? undefined : sizes[s]} onTurn={waited.includes(s) && !finished}
      back={game?.back ?? "french"} timer={timer(s)}
      score={undealt ? undefined : dealt && game.seatScore ? game.seatScore(g, s)
        : totals[s] !== undefined ? String(totals[s]) : undefined} />
  );
  // what each seat last played lies on the felt between it and the centre
  const played = (s: number) => {
    const note = notes[s];
    if (!game || !note.played?.length) return null;
    return (
      <div class="played-group" data-seat={s} key={s}>
        <CardRow cards={note.played} face={game.face} back={game.back} small cls="played-cards" />
        <span class="played-by">{names[s]}</span>
      </div>
    );
  };
  const others = order.slice(1).map((s, k) => ({ s, where: pos[k + 1] }));
  const cardMoves = game && g !== undefined ? legal.filter((m) => game.plan(m, g)) : [];
  const turnButtons = game && g !== undefined ? legal.filter((m) => !game.plan(m, g) && !game.outOfTurn(m, g)) : legal;
  const anytime = game && g !== undefined ? legal.filter((m) => !game.plan(m, g) && game.outOfTurn(m, g)) : [];
  const label = (m: string) => (game && g !== undefined ? game.label(m, g, names) : m);
  const myTurn = !!mine && seat !== undefined && v.onTurn.includes(seat);
  const summary = summaries[0];
  const summaryGame = summary ? game?.unwrap(summary.view.view) : undefined;
  const title = titles[table.game] ?? table.game;

  return (
    <div class="table-page" id="table-page">
      <header class="table-header">
        <a href="#/" class="back" aria-label="back to the lobby">←&nbsp;<span class="back-word">Lobby</span></a>
        <div class="title">
          <h1>{title}</h1>
          <span class="progress">{dealt ? game.progress(g) : ""}
            {table.status === TableStatus.WAITING ? "Waiting for players" : ""}
            {abandoned ? `${dealt ? " · c" : "C"}losed as abandoned` : ""}</span>
        </div>
        <div id="role" data-seat={mine ? String(seat) : ""}>
          {mine ? <span class="role-text">You play as <b>{table.seats[me]?.name || "you"}</b></span> : <span>Spectator</span>}
          {mine && !finished && table.status !== TableStatus.ABANDONED && <button type="button" id="leave" class="small-button" onClick={leave}
            aria-label="leave your seat">Leave</button>}
        </div>
        <div class="header-buttons">
          <button type="button" id="show-log" class="small-button" aria-pressed={panel === "log"}
            onClick={() => setPanel(panel === "log" ? "" : "log")}>Moves</button>
          <button type="button" id="show-scores" class="small-button" aria-pressed={panel === "scores"}
            onClick={() => setPanel(panel === "scores" ? "" : "scores")}>Scores</button>
        </div>
      </header>
      {error && <div class="error" role="alert">{error}</div>}
      {refusal && (
        <div class="refusal" id="refusal" role="alert" title={refusalDetail}>
          <span>{refusal}</span>
          <button type="button" class="small-button" onClick={() => setRefusal("")} aria-label="dismiss">OK</button>
        </div>
      )}
      {!isLive && (
        <div id="replay" role="status">
          <span>Replaying move {pinned + 1} of {past.current.length}</span>
          <button type="button" id="replay-prev" class="small-button" disabled={pinned <= 0} onClick={() => setPinned(pinned - 1)}
            aria-label="previous move">◀</button>
          <button type="button" id="replay-next" class="small-button" disabled={pinned + 1 >= past.current.length}
            onClick={() => setPinned(pinned + 1)} aria-label="next move">▶</button>
          <button type="button" id="replay-live" class="small-button" onClick={() => setPinned(-1)}>Back to the table</button>
        </div>
      )}
      <main id="table" data-version={String(v.version)} data-legal={JSON.stringify(legal)} data-status={TableStatus[table.status]}
        data-seats={n} data-on-turn={JSON.stringify(finished ? [] : waited)}>
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
                    {abandoned ? "Nobody came back to this table: it was closed before the cards were dealt."
                      : `${table.seats.filter((x) => x.occupied).length} of ${n} seats taken: the cards are dealt when everyone has sat down.`}
                  </div>
                ) : null}
            </div>
            <div class="played played-bottom">{played(me)}</div>
          </div>
        </section>
        <section class="my-area">
          {seatBox(me, "bottom")}
          {!mine && (
            <div class="spectating">Watching. {table.seats.some((s) => s.kind === SeatKind.HUMAN && !s.occupied
              && (!s.playerId || s.playerId === player?.playerId)) && !finished && !abandoned
              ? <button type="button" class="small-button" id="take-seat" onClick={() => void sit(undefined, false)}>Take the open seat</button> : null}</div>
          )}
          {mine && game && (
            <Hand cards={hand} back={game.back} selected={selected} onToggle={toggle} onPlay={play} enabled
              play={isLive && !finished && g !== undefined ? { game, g, legal, names, target, busy,
                select: (s) => { setNotice(""); setSelected(s); }, send: (m) => void send(m) } : undefined} />
          )}
          {mine && isLive && !finished && (
            <div id="actions" class="actions">
              {notice && <div id="notice" class="notice" role="alert">{notice}</div>}
              <div class="action-row">
                {cardMoves.length > 0 && (
                  <button type="button" id="play" class="primary" disabled={busy} onClick={play}>
                    {game && g !== undefined ? game.playLabel(g) : "Play"}{selected.size ? ` (${selected.size})` : ""}
                  </button>
                )}
                {cardMoves.length > 0 && selected.size > 0 && (
                  <button type="button" id="clear" class="secondary" onClick={() => { setSelected(new Set()); setTarget(undefined); setNotice(""); }}>Clear</button>
                )}
                {turnButtons.map((m) => (
                  <button type="button" class="move" data-move={m} key={m} disabled={busy} onClick={() => void send(m)}>{label(m)}</button>
                ))}
                {!legal.length && !anytime.length && (
                  <span class="waiting">{waited.length ? `Waiting for ${waited.map((s) => names[s]).join(", ")}` : ""}</span>
                )}
              </div>
              {anytime.length > 0 && (
                <div class="action-row anytime" aria-label="moves you may make at any time">
                  {anytime.map((m) => (
                    <button type="button" class="move out-of-turn" data-move={m} key={m} onClick={() => void send(m)}>{label(m)}</button>
                  ))}
                </div>
              )}
              {game?.autoEnd && (
                <label class="auto-end">
                  <input type="checkbox" id="auto-end" checked={autoEnd}
                    onChange={(e) => switchAutoEnd(e.currentTarget.checked)} />
                  End my turn for me when ending it is all I can do
                </label>
              )}
              {myTurn && cardMoves.length > 0 && !selected.size && !notice && (
                <div class="hint muted">Pick cards{game?.pickFirst ? ` (${game.pickFirst} first)` : ""}, then {game && g !== undefined ? game.playLabel(g) : "Play"}.</div>
              )}
            </div>
          )}
        </section>
      </main>
      <aside id="side-panel" class="side-panel" hidden={!panel}>
        <button type="button" class="small-button close" onClick={() => setPanel("")} aria-label="close the panel">✕</button>
        <div hidden={panel !== "scores"}>
          <h2>Score sheet</h2>
          {game && g !== undefined && <SheetTable sheet={game.sheet(g, names)} />}
        </div>
        <div hidden={panel !== "log"}>
          <h2>Moves</h2>
          {v.commitment?.sha256 && (
            <p class="commitment muted" id="commitment" data-sha256={v.commitment.sha256}>
              These cards were sealed before the deal: SHA-256 <code title={v.commitment.sha256}>{v.commitment.sha256.slice(0, 16)}…</code>.
              The record of the finished table reveals them and their salt, for anyone to check.
            </p>
          )}
          <p class="muted">Click a move to see the table as it was.</p>
          <ol id="log" onClick={(e) => {
            const line = (e.target as HTMLElement).closest<HTMLElement>("li[data-version]");
            const at = line ? past.current.findIndex((p) => String(p.version) === line.dataset.version) : -1;
            if (at >= 0) setPinned(at);
          }}>
            {log.map((l) => (
              <li key={String(l.version)} data-version={String(l.version)}
                class={`event event-${KIND_CLASS[l.kind] ?? "event"} ${!isLive && past.current[pinned]?.version === l.version ? "pinned" : ""}`}>
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
      {isLive && summary && game && summaryGame !== undefined && !finished && (() => {
        const s = game.summary(summaryGame, summary.deal, names);
        return s ? (
          <DealSummaryDialog deal={summary.deal} summary={s} names={names} sheet={game.sheet(summaryGame, names)} blocking={!!mine}
            onClose={() => setSummaries((q) => q.slice(1))} />
        ) : null;
      })()}
      {isLive && finished && game && g !== undefined && (
        <GameOver view={v} game={game} g={g} names={names} mine={mine ? me : null} open={overOpen}
          onToggle={() => setOverOpen(!overOpen)} onError={(e) => setError(e)} />
      )}
    </div>
  );
}

const AUTO_END_KEY = "croupier.autoEnd";
