// The lobby: who you are (a guest sign-in, or just a name), "Play now" per game, your own
// tables, the form for a new table, the tables as cards (newest first, paged, filtered by
// game and status), and the ladder's standings.
import { Code, ConnectError } from "@connectrpc/connect";
import { toJson, type JsonObject } from "@bufbuild/protobuf";
import type { JSX } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, errorText, joinTable, tokenFor } from "../api";
import { GameInfoSchema, SeatKind, TableStatus, type GameInfo, type Table } from "../gen/croupier/v1/croupier_pb";
import type { Identity } from "../players/identity";
import { PlayerBar } from "../players/SignIn";
import { usePlayer } from "../players/session";
import { CreateForm } from "./CreateForm";
import { Ladder } from "./Ladder";
import { MyTables } from "./MyTables";
import { PlayNow } from "./PlayNow";

const LOBBY_PAGE = 20;
const STATUS_WORDS: Record<number, string> = {
  [TableStatus.WAITING]: "Waiting for players", [TableStatus.PLAYING]: "Playing", [TableStatus.FINISHED]: "Finished",
  [TableStatus.ABANDONED]: "Closed: abandoned",
};

function age(createdAt: number): string {
  const s = Math.max(0, Date.now() / 1000 - createdAt);
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} days ago`;
}

function TableCard({ t, title, me, onError }: {
  t: Table; title: string; me: Identity | null; onError: (e: string) => void;
}): JSX.Element {
  // a seat kept for another player is no open seat for this one
  const open = t.seats.find((s) => !s.occupied && s.kind === SeatKind.HUMAN && (!s.playerId || s.playerId === me?.playerId));
  const over = t.status === TableStatus.FINISHED || t.status === TableStatus.ABANDONED;
  const held = tokenFor(t.tableId) || (me && !over && t.seats.some((s) => s.occupied && s.playerId === me.playerId));
  return (
    <article class="table-card" data-table={t.tableId} data-game={t.game} data-status={TableStatus[t.status]}>
      <header>
        <h3>{title}</h3>
        <span class={`table-status status-${TableStatus[t.status]?.toLowerCase()}`}>{STATUS_WORDS[t.status] ?? ""}</span>
      </header>
      <ul class="table-seats">
        {t.seats.map((s, i) => (
          <li key={i} class={s.occupied ? "taken" : "free"}>
            {s.occupied ? s.name || (s.isBot ? "bot" : "player") : s.kind === SeatKind.BOT ? `bot (${s.botLevel})` : "open seat"}
            {s.isBot && s.occupied ? <span class="badge bot">bot</span> : null}
            {!s.occupied && s.playerId && s.playerId !== me?.playerId ? <span class="badge kept">kept</span> : null}
          </li>
        ))}
      </ul>
      <footer>
        <span class="muted">{t.players} players · {age(t.createdAt)}</span>
        <span class="card-actions">
          {held ? <a class="return button-link" href={`#/table/${t.tableId}`}>Back to your seat</a>
            : open && !over ? (
              <button type="button" class="join primary" data-table={t.tableId}
                onClick={() => joinTable(t.tableId).catch((e) => onError(errorText(e)))}>Join</button>
            ) : null}
          <a class="watch button-link" href={`#/table/${t.tableId}`}>{t.status === TableStatus.FINISHED ? "Replay" : "Watch"}</a>
        </span>
      </footer>
    </article>
  );
}

export function Lobby(): JSX.Element {
  const { me } = usePlayer();
  const [games, setGames] = useState<GameInfo[]>([]);
  const [error, setError] = useState("");
  const [tables, setTables] = useState<Table[]>([]);
  const [gameFilter, setGameFilter] = useState("");
  const [statusFilter, setStatusFilter] = useState(String(TableStatus.UNSPECIFIED));
  const [page, setPage] = useState(0);
  const [tokens, setTokens] = useState<string[]>([""]);
  const [known, setKnown] = useState(false); // this page's answer is in: the pager may move
  const asked = useRef(0);

  useEffect(() => {
    api.listGames({}).then((r) => setGames(r.games), (e) => setError(errorText(e)));
  }, []);

  // A page token is the place of the last table of a page in the list's order (newest
  // first), bound to the filters it was given for: tables made since do not shift the later
  // pages, and a change of filter starts again from the first page.
  useEffect(() => {
    let stop = false;
    setKnown(false);
    const refresh = async () => {
      const request = ++asked.current;
      try {
        const reply = await api.listTables({
          limit: LOBBY_PAGE, game: gameFilter, status: Number(statusFilter) as TableStatus, pageToken: tokens[page],
        });
        if (request !== asked.current || stop) return;
        setTables(reply.tables);
        setTokens((t) => {
          const kept = t.slice(0, page + 1);
          if (reply.nextPageToken) kept.push(reply.nextPageToken);
          return kept.length === t.length && kept.every((x, i) => x === t[i]) ? t : kept;
        });
        setKnown(true);
      } catch (err) {
        if (request !== asked.current || stop) return;
        setError(errorText(err));
        if (page > 0 && err instanceof ConnectError && err.code === Code.InvalidArgument) {
          setTokens([""]); // a page the server no longer takes: back to the first
          setPage(0);
        }
      }
    };
    void refresh();
    const timer = window.setInterval(refresh, 2000);
    return () => {
      stop = true;
      window.clearInterval(timer);
    };
  }, [gameFilter, statusFilter, page, tokens[page]]);

  const titleOf = (g: string) => games.find((x) => x.name === g)?.title ?? g;
  const filter = (set: (v: string) => void) => (e: Event) => {
    set((e.target as HTMLSelectElement).value);
    setTokens([""]);
    setPage(0);
  };
  return (
    <div class="lobby-page">
      <header class="lobby-header">
        <h1>Croupier</h1>
        <PlayerBar />
      </header>
      {error && <div class="error" role="alert" id="status">{error}</div>}
      <MyTables titleOf={titleOf} />
      {games.length > 0 && <PlayNow games={games} onError={setError} />}
      <section class="panel">
        <h2>New table</h2>
        {games.length ? <CreateForm games={games} onError={setError} infoJson={(g) => toJson(GameInfoSchema, g) as JsonObject} />
          : <p class="muted">Loading the games…</p>}
      </section>
      <section class="panel">
        <h2>Tables</h2>
        <div class="lobby-filters">
          <label>Game <select id="filter-game" value={gameFilter} onChange={filter(setGameFilter)}>
            <option value="">any</option>
            {games.map((g) => <option key={g.name} value={g.name}>{g.title}</option>)}
          </select></label>
          <label>Status <select id="filter-status" value={statusFilter} onChange={filter(setStatusFilter)}>
            {[TableStatus.UNSPECIFIED, TableStatus.WAITING, TableStatus.PLAYING, TableStatus.FINISHED, TableStatus.ABANDONED].map((s) => (
              <option key={s} value={String(s)}>{s === TableStatus.UNSPECIFIED ? "any" : STATUS_WORDS[s]}</option>
            ))}
          </select></label>
        </div>
        <div id="tables" class="table-cards">
          {tables.map((t) => <TableCard key={t.tableId} t={t} title={titleOf(t.game)} me={me} onError={setError} />)}
          {!tables.length && <p class="muted">No table here yet: create one above.</p>}
        </div>
        <div class="lobby-pages">
          <button type="button" id="page-newer" class="secondary" disabled={!known || page === 0}
            onClick={() => setPage(page - 1)}>← Newer</button>
          <span id="page-number">page {page + 1}</span>
          <button type="button" id="page-older" class="secondary" disabled={!known || page + 1 >= tokens.length}
            onClick={() => setPage(page + 1)}>Older →</button>
        </div>
      </section>
      <Ladder games={games} followGame={gameFilter} />
    </div>
  );
}
