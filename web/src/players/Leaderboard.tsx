// A game's leaderboard (ListLeaderboard): the best players and bot levels of its rated
// tables, on one scale, and the places around the signed-in player.
import { Code, ConnectError } from "@connectrpc/connect";
import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, errorText } from "../api";
import type { GameInfo, LeaderboardEntry } from "../gen/croupier/v1/croupier_pb";
import { gameTitle, num, t } from "../i18n";
import { PageHeader } from "./MatchPage";
import { usePlayer } from "./session";

const TOP = 20;
const AROUND = 7;

export function BoardTable({ entries, me, id }: { entries: LeaderboardEntry[]; me: string; id: string }): JSX.Element {
  return (
    <div class="ladder-scroll">
      <table class="ladder-table board-table" id={id}>
        <thead>
          <tr>
            <th scope="col" class="num">#</th>
            <th scope="col">{t("common.board.player")}</th>
            <th scope="col" class="num" title={t("common.board.ratingHint")}>{t("common.rating.rating")}</th>
            <th scope="col" class="num skill" title={t("common.rating.skillHint")}>μ ± σ</th>
            <th scope="col" class="num" title={t("common.board.gamesHint")}>{t("common.board.games")}</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((e) => (
            <tr key={e.playerId} data-player={e.playerId}
              class={`${e.rank <= 3 ? `podium podium-${e.rank}` : ""} ${e.playerId === me ? "me" : ""}`}>
              <td class="num"><span class="place">{e.rank}</span></td>
              <td class="entrant" title={e.name || e.playerId}>
                {e.bot ? <>{e.name || e.playerId} <span class="badge bot">{t("common.badge.bot")}</span></>
                  : <a href={`#/profile/${encodeURIComponent(e.playerId)}`}>{e.name || e.playerId}</a>}
                {e.playerId === me && <span class="badge you">{t("common.badge.you")}</span>}
              </td>
              <td class="num rating">{num(e.ordinal, 1)}</td>
              <td class="num skill">{num(e.mu, 1)} ± {num(e.sigma, 1)}</td>
              <td class="num matches">{num(e.games)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function Leaderboard({ game }: { game: string }): JSX.Element {
  const { me } = usePlayer();
  const [games, setGames] = useState<GameInfo[]>([]);
  const [top, setTop] = useState<LeaderboardEntry[] | null>(null);
  const [total, setTotal] = useState(0);
  const [around, setAround] = useState<LeaderboardEntry[] | null>(null);
  const [error, setError] = useState("");
  useEffect(() => {
    api.listGames({}).then((r) => {
      setGames(r.games);
      if (!game && r.games.length) location.replace(`#/leaderboard/${r.games[0].name}`);
    }, (e) => setError(errorText(e)));
  }, []);
  useEffect(() => {
    if (!game) return;
    let stop = false;
    api.listLeaderboard({ game, limit: TOP }).then((r) => {
      if (stop) return;
      setTop(r.entries);
      setTotal(r.total);
    }, (e) => !stop && setError(errorText(e)));
    if (me) {
      api.listLeaderboard({ game, limit: AROUND, around: "me" }).then((r) => !stop && setAround(r.entries), (e) => {
        if (stop) return;
        // not rated yet in this game: nothing around
        if (e instanceof ConnectError && e.code === Code.NotFound) setAround([]);
        else setError(errorText(e));
      });
    }
    return () => { stop = true; };
  }, [game, me?.playerId]);
  const title = gameTitle(game, games.find((g) => g.name === game)?.title);
  const mine = me?.playerId ?? "";
  const inTop = top?.some((e) => e.playerId === mine);
  return (
    <div class="page leaderboard-page" id="leaderboard" data-game={game}>
      <PageHeader title={t("common.board.heading")} />
      <section class="panel">
        <div class="ladder-head">
          <h2>{title}</h2>
          <label>{t("common.lobby.game")} <select id="board-game" value={game}
            onChange={(e) => location.replace(`#/leaderboard/${(e.target as HTMLSelectElement).value}`)}>
            {games.map((g) => <option key={g.name} value={g.name}>{gameTitle(g.name, g.title)}</option>)}
          </select></label>
        </div>
        {error && <p class="ladder-error" role="alert">{t("common.board.failed", { error })}</p>}
        {top === null && !error && <p class="muted">{t("common.loading")}</p>}
        {top !== null && !top.length && <p class="muted" id="board-empty">{t("common.board.empty", { game: title })}</p>}
        {top !== null && top.length > 0 && <BoardTable entries={top} me={mine} id="board-top" />}
        <p class="ladder-note muted">{total > 0 ? `${t("common.board.total", { n: total })} · ` : ""}{t("common.board.note")}</p>
      </section>
      {me && around !== null && !inTop && (
        <section class="panel" id="board-around">
          <h2>{t("common.board.around")}</h2>
          {around.length ? <BoardTable entries={around} me={mine} id="board-around-table" />
            : <p class="muted">{t("common.board.noRating", { game: title })}</p>}
        </section>
      )}
    </div>
  );
}
