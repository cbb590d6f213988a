// The lobby's ladder panel: the server's standings (ListRatings) for one game, best first.
// It follows the lobby's game filter and has a game picker of its own for "any".
import type { JSX } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, errorText } from "../api";
import type { GameInfo, Rating } from "../gen/croupier/v1/croupier_pb";
import { gameTitle, num, t } from "../i18n";

const LADDER = "main";
const REFRESH_MS = 10_000;

/** Competition ranks (1, 1, 3): equal ratings as shown share a place. */
function ranks(ratings: Rating[]): number[] {
  const out: number[] = [];
  ratings.forEach((r, i) => {
    const same = i > 0 && r.ordinal.toFixed(1) === ratings[i - 1].ordinal.toFixed(1);
    out.push(same ? out[i - 1] : i + 1);
  });
  return out;
}

export function Ladder({ games, followGame }: { games: GameInfo[]; followGame: string }): JSX.Element {
  const [game, setGame] = useState(followGame);
  const [ratings, setRatings] = useState<Rating[] | null>(null);
  const [error, setError] = useState("");
  const asked = useRef(0);

  useEffect(() => {
    if (followGame) setGame(followGame);
  }, [followGame]);
  useEffect(() => {
    if (!game && games.length) setGame(games[0].name);
  }, [games, game]);

  useEffect(() => {
    if (!game) return;
    let stop = false;
    setRatings(null);
    const refresh = async () => {
      const request = ++asked.current;
      try {
        const reply = await api.listRatings({ ladder: LADDER, game });
        if (stop || request !== asked.current) return;
        setRatings(reply.ratings);
        setError("");
      } catch (err) {
        if (stop || request !== asked.current) return;
        setError(errorText(err));
      }
    };
    void refresh();
    const timer = window.setInterval(refresh, REFRESH_MS);
    return () => {
      stop = true;
      window.clearInterval(timer);
    };
  }, [game]);

  const title = gameTitle(game, games.find((g) => g.name === game)?.title);
  const places = ratings ? ranks(ratings) : [];
  return (
    <section class="panel ladder" id="ladder" data-game={game}>
      <div class="ladder-head">
        <h2>{t("common.ladder.heading")}</h2>
        <label>{t("common.lobby.game")} <select id="ladder-game" value={game} onChange={(e) => setGame((e.target as HTMLSelectElement).value)}>
          {games.map((g) => <option key={g.name} value={g.name}>{gameTitle(g.name, g.title)}</option>)}
        </select></label>
      </div>
      {error && <p class="ladder-error" role="alert">{t("common.ladder.failed", { error })}</p>}
      {ratings === null && !error && <p class="muted">{t("common.ladder.loading")}</p>}
      {ratings !== null && !ratings.length && (
        <p class="ladder-empty muted">{t("common.ladder.empty", { game: title })}</p>
      )}
      {ratings !== null && ratings.length > 0 && (
        <div class="ladder-scroll">
          <table class="ladder-table">
            <thead>
              <tr>
                <th scope="col" class="num">#</th>
                <th scope="col">{t("common.ladder.entrant")}</th>
                <th scope="col" class="num" title={t("common.ladder.ratingHint")}>{t("common.rating.rating")}</th>
                <th scope="col" class="num skill" title={t("common.rating.skillHint")}>μ ± σ</th>
                <th scope="col" class="num" title={t("common.ladder.matchesHint")}>{t("common.ladder.matches")}</th>
              </tr>
            </thead>
            <tbody>
              {ratings.map((r, i) => (
                <tr key={r.entrant} data-entrant={r.entrant} class={places[i] <= 3 ? `podium podium-${places[i]}` : ""}>
                  <td class="num"><span class="place">{places[i]}</span></td>
                  <td class="entrant" title={r.entrant}>{r.entrant}</td>
                  <td class="num rating">{num(r.ordinal, 1)}</td>
                  <td class="num skill">{num(r.mu, 1)} ± {num(r.sigma, 1)}</td>
                  <td class="num matches">{num(r.matches)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <p class="ladder-note muted">{t("common.ladder.note", { ladder: LADDER })}</p>
    </section>
  );
}
