// The lobby: who you are (a guest sign-in, or just a name), "Play now" per game, your own
// tables, the form for a new table, the tables as cards (newest first, paged, filtered by
// game and status), and the ladder's standings.
import { Code, ConnectError } from "@connectrpc/connect";
import { toJson, type JsonObject } from "@bufbuild/protobuf";
import type { JSX } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, errorText, joinTable, tokenFor } from "../api";
import { ago, gameTitle, t } from "../i18n";
import { LanguagePicker } from "../i18n/LanguagePicker";
import { GameInfoSchema, SeatKind, TableStatus, type GameInfo, type Table } from "../gen/croupier/v1/croupier_pb";
import type { Identity } from "../players/identity";
import { PlayerBar } from "../players/SignIn";
import { usePlayer } from "../players/session";
import { CreateForm } from "./CreateForm";
import { Ladder } from "./Ladder";
import { MyTables } from "./MyTables";
import { PlayNow } from "./PlayNow";

const LOBBY_PAGE = 20;
const STATUS_KEYS: Record<number, string> = {
  [TableStatus.WAITING]: "waiting", [TableStatus.PLAYING]: "playing", [TableStatus.FINISHED]: "finished",
  [TableStatus.ABANDONED]: "abandoned",
};
const statusWords = (s: TableStatus) => (STATUS_KEYS[s] ? t(`common.status.${STATUS_KEYS[s]}`) : "");

function TableCard({ table, title, me, onError }: {
  table: Table; title: string; me: Identity | null; onError: (e: string) => void;
}): JSX.Element {
  const tb = table;
  // a seat kept for another player is no open seat for this one
  const open = tb.seats.find((s) => !s.occupied && s.kind === SeatKind.HUMAN && (!s.playerId || s.playerId === me?.playerId));
  const over = tb.status === TableStatus.FINISHED || tb.status === TableStatus.ABANDONED;
  const held = tokenFor(tb.tableId) || (me && !over && tb.seats.some((s) => s.occupied && s.playerId === me.playerId));
  return (
    <article class="table-card" data-table={tb.tableId} data-game={tb.game} data-status={TableStatus[tb.status]}>
      <header>
        <h3>{title}</h3>
        <span class={`table-status status-${TableStatus[tb.status]?.toLowerCase()}`}>{statusWords(tb.status)}</span>
      </header>
      <ul class="table-seats">
        {tb.seats.map((s, i) => (
          <li key={i} class={s.occupied ? "taken" : "free"}>
            {s.occupied ? s.name || (s.isBot ? t("common.seat.bot") : t("common.seat.player"))
              : s.kind === SeatKind.BOT ? t("common.seat.botLevel", { level: s.botLevel }) : t("common.seat.open")}
            {s.isBot && s.occupied ? <span class="badge bot">{t("common.badge.bot")}</span> : null}
            {!s.occupied && s.playerId && s.playerId !== me?.playerId ? <span class="badge kept">{t("common.badge.kept")}</span> : null}
          </li>
        ))}
      </ul>
      <footer>
        <span class="muted">{t("common.lobby.playersCount", { n: tb.players })} · {ago(tb.createdAt)}</span>
        <span class="card-actions">
          {held ? <a class="return button-link" href={`#/table/${tb.tableId}`}>{t("common.lobby.backToSeat")}</a>
            : open && !over ? (
              <button type="button" class="join primary" data-table={tb.tableId}
                onClick={() => joinTable(tb.tableId).catch((e) => onError(errorText(e)))}>{t("common.lobby.join")}</button>
            ) : null}
          <a class="watch button-link" href={`#/table/${tb.tableId}`}>{tb.status === TableStatus.FINISHED ? t("common.lobby.replay") : t("common.lobby.watch")}</a>
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
        setTokens((old) => {
          const kept = old.slice(0, page + 1);
          if (reply.nextPageToken) kept.push(reply.nextPageToken);
          return kept.length === old.length && kept.every((x, i) => x === old[i]) ? old : kept;
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

  const titleOf = (g: string) => gameTitle(g, games.find((x) => x.name === g)?.title);
  const filter = (set: (v: string) => void) => (e: Event) => {
    set((e.target as HTMLSelectElement).value);
    setTokens([""]);
    setPage(0);
  };
  return (
    <div class="lobby-page">
      <header class="lobby-header">
        <h1>{t("common.app.title")}</h1>
        <LanguagePicker />
        <PlayerBar />
      </header>
      {error && <div class="error" role="alert" id="status">{error}</div>}
      <MyTables titleOf={titleOf} />
      {games.length > 0 && <PlayNow games={games} onError={setError} />}
      <section class="panel">
        <h2>{t("common.create.heading")}</h2>
        {games.length ? <CreateForm games={games} onError={setError} infoJson={(g) => toJson(GameInfoSchema, g) as JsonObject} />
          : <p class="muted">{t("common.lobby.loadingGames")}</p>}
      </section>
      <section class="panel">
        <h2>{t("common.lobby.tables")}</h2>
        <div class="lobby-filters">
          <label>{t("common.lobby.game")} <select id="filter-game" value={gameFilter} onChange={filter(setGameFilter)}>
            <option value="">{t("common.lobby.any")}</option>
            {games.map((g) => <option key={g.name} value={g.name}>{titleOf(g.name)}</option>)}
          </select></label>
          <label>{t("common.lobby.status")} <select id="filter-status" value={statusFilter} onChange={filter(setStatusFilter)}>
            {[TableStatus.UNSPECIFIED, TableStatus.WAITING, TableStatus.PLAYING, TableStatus.FINISHED, TableStatus.ABANDONED].map((s) => (
              <option key={s} value={String(s)}>{s === TableStatus.UNSPECIFIED ? t("common.lobby.any") : statusWords(s)}</option>
            ))}
          </select></label>
        </div>
        <div id="tables" class="table-cards">
          {tables.map((x) => <TableCard key={x.tableId} table={x} title={titleOf(x.game)} me={me} onError={setError} />)}
          {!tables.length && <p class="muted">{t("common.lobby.noTables")}</p>}
        </div>
        <div class="lobby-pages">
          <button type="button" id="page-newer" class="secondary" disabled={!known || page === 0}
            onClick={() => setPage(page - 1)}>{t("common.lobby.newer")}</button>
          <span id="page-number">{t("common.lobby.page", { n: page + 1 })}</span>
          <button type="button" id="page-older" class="secondary" disabled={!known || page + 1 >= tokens.length}
            onClick={() => setPage(page + 1)}>{t("common.lobby.older")}</button>
        </div>
      </section>
      <Ladder games={games} followGame={gameFilter} />
    </div>
  );
}
