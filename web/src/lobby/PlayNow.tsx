// "Play now": one button per game that asks the server for a match (FindMatch) and opens the
// waiting page; "Rated" for signed-in players (a table of close ratings, which moves them).
// Matchmaking needs a player: signed out, the button asks for a guest name first.
import type { JSX } from "preact";
import { useState } from "preact/hooks";
import { api, errorText } from "../api";
import { MatchMode, type GameInfo } from "../gen/croupier/v1/croupier_pb";
import { gameTitle, t } from "../i18n";
import { rulesHref } from "../rules/href";
import { SignInDialog } from "../players/SignIn";
import { usePlayer } from "../players/session";

export function PlayNow({ games, onError }: { games: GameInfo[]; onError: (e: string) => void }): JSX.Element {
  const { me } = usePlayer();
  const [asking, setAsking] = useState<{ game: string; mode: MatchMode } | null>(null);
  const [busy, setBusy] = useState(false);
  const find = async (game: string, mode: MatchMode) => {
    setBusy(true);
    try {
      const ticket = await api.findMatch({ game, players: 0, mode });
      location.hash = `#/match/${ticket.ticketId}`;
    } catch (err) {
      onError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  const play = (game: string, mode: MatchMode) => (me ? void find(game, mode) : setAsking({ game, mode }));
  const players = (g: GameInfo) => (g.minPlayers === g.maxPlayers ? t("common.lobby.playersCount", { n: g.minPlayers })
    : t("common.lobby.playersRange", { min: g.minPlayers, max: g.maxPlayers }));
  return (
    <section class="panel play-now" id="play-now">
      <h2>{t("common.playNow.heading")}</h2>
      <p class="muted play-now-note">{t("common.playNow.note")}</p>
      <ul class="play-games">
        {games.map((g) => (
          <li key={g.name} class="play-game" data-game={g.name}>
            <div class="play-game-name">
              <b>{gameTitle(g.name, g.title)}</b>
              <span class="muted">{players(g)} · <a href={`#/leaderboard/${g.name}`} class="board-link">{t("common.playNow.leaderboard")}</a>
                {rulesHref(g.name) && <> · <a href={rulesHref(g.name)} class="board-link play-rules">{t("common.rules.link")}</a></>}</span>
            </div>
            <div class="play-game-buttons">
              <button type="button" class="primary play-quick" data-game={g.name} disabled={busy}
                onClick={() => play(g.name, MatchMode.QUICK)}>{t("common.playNow.button")}</button>
              {me && (
                <button type="button" class="secondary play-rated" data-game={g.name} disabled={busy}
                  onClick={() => play(g.name, MatchMode.RATED)} title={t("common.playNow.ratedHint")}>{t("common.playNow.rated")}</button>
              )}
            </div>
          </li>
        ))}
      </ul>
      {asking && (
        <SignInDialog why={t("common.playNow.why")}
          onCancel={() => setAsking(null)}
          onDone={() => { const a = asking; setAsking(null); void find(a.game, a.mode); }} />
      )}
    </section>
  );
}
