// The lobby's ladder panel: the server's standings (ListRatings) for one game, best first.
// It follows the lobby's game filter and has a game picker of its own for "any".
import type { JSX } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, errorText } from "../api";
import type { GameInfo, Rating } from "../gen/croupier/v1/croupier_pb";

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

  const title = games.find((g) => g.name === game)?.title ?? game;
  const places = ratings ? ranks(ratings) : [];
  return (
    <section class="panel ladder" id="ladder" data-game={game}>
      <div class="ladder-head">
        <h2>Ladder</h2>
        <label>Game <select id="ladder-game" value={game} onChange={(e) => setGame((e.target as HTMLSelectElement).value)}>
          {games.map((g) => <option key={g.name} value={g.name}>{g.title}</option>)}
        </select></label>
      </div>
      {error && <p class="ladder-error" role="alert">Could not load the ladder: {error}</p>}
      {ratings === null && !error && <p class="muted">Loading the standings…</p>}
      {ratings !== null && !ratings.length && (
        <p class="ladder-empty muted">No rated matches in {title} yet: the ladder is empty.</p>
      )}
      {ratings !== null && ratings.length > 0 && (
        <div class="ladder-scroll">
          <table class="ladder-table">
            <thead>
              <tr>
                <th scope="col" class="num">#</th>
                <th scope="col">Entrant</th>
                <th scope="col" class="num" title="mu − 3 sigma: a cautious estimate that rises as an entrant proves itself">Rating</th>
                <th scope="col" class="num skill" title="skill estimate ± its uncertainty">μ ± σ</th>
                <th scope="col" class="num" title="rated matches played">Matches</th>
              </tr>
            </thead>
            <tbody>
              {ratings.map((r, i) => (
                <tr key={r.entrant} data-entrant={r.entrant} class={places[i] <= 3 ? `podium podium-${places[i]}` : ""}>
                  <td class="num"><span class="place">{places[i]}</span></td>
                  <td class="entrant" title={r.entrant}>{r.entrant}</td>
                  <td class="num rating">{r.ordinal.toFixed(1)}</td>
                  <td class="num skill">{r.mu.toFixed(1)} ± {r.sigma.toFixed(1)}</td>
                  <td class="num matches">{r.matches}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <p class="ladder-note muted">Ladder “{LADDER}”: bots rated by OpenSkill after every match; rating = μ − 3σ.</p>
    </section>
  );
}
