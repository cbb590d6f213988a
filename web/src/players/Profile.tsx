// A player's profile (GetProfile): per game the rating with its history as a small line, the
// games played; the recent finished tables to look at again.
import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, errorText } from "../api";
import type { GameProfile, Profile, RatingPoint } from "../gen/croupier/v1/croupier_pb";
import { dateTime, gameTitle, list, num, t } from "../i18n";
import { PageHeader } from "./MatchPage";
import { usePlayer } from "./session";

/** The rating (mu - 3 sigma) after each rated game, oldest first, as a line with its dots. */
export function RatingLine({ points }: { points: RatingPoint[] }): JSX.Element {
  const w = 320;
  const h = 90;
  const pad = 8;
  const values = points.map((p) => p.ordinal);
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  const span = hi - lo || 1;
  const x = (i: number) => (points.length < 2 ? w / 2 : pad + (i * (w - 2 * pad)) / (points.length - 1));
  // one rating so far (or all equal): a level line through the middle
  const y = (v: number) => (hi === lo ? h / 2 : h - pad - ((v - lo) * (h - 2 * pad)) / span);
  const line = points.map((p, i) => `${x(i).toFixed(1)},${y(p.ordinal).toFixed(1)}`).join(" ");
  return (
    <figure class="rating-line">
      <svg viewBox={`0 0 ${w} ${h}`} role="img" aria-label={t("common.profile.lineLabel", { n: points.length, first: num(values[0], 1), last: num(values[values.length - 1], 1) })}>
        <line x1={pad} x2={w - pad} y1={y(hi)} y2={y(hi)} class="grid" />
        <line x1={pad} x2={w - pad} y1={y(lo)} y2={y(lo)} class="grid" />
        {points.length > 1 && <polyline points={line} class="line" />}
        {points.map((p, i) => (
          <circle key={p.tableId} cx={x(i)} cy={y(p.ordinal)} r={3.5} class={p.rank === 1 ? "dot won" : "dot"}>
            <title>{t("common.profile.point", { when: dateTime(p.time), rating: num(p.ordinal, 1), place: p.rank })}</title>
          </circle>
        ))}
      </svg>
      <figcaption class="muted">{t("common.profile.caption", { best: num(hi, 1), lowest: num(lo, 1), n: points.length })}</figcaption>
    </figure>
  );
}

function GameCard({ g, title }: { g: GameProfile; title: string }): JSX.Element {
  const r = g.rating;
  return (
    <article class="profile-game" data-game={g.game}>
      <header>
        <h3>{title}</h3>
        <a class="button-link small-link" href={`#/leaderboard/${g.game}`}>{t("common.board.heading")}</a>
      </header>
      <div class="profile-stats">
        <div><span class="stat">{r ? num(r.ordinal, 1) : "–"}</span><span class="muted">{t("common.profile.rating")}</span></div>
        <div><span class="stat">{r ? `#${num(r.rank)}` : "–"}</span><span class="muted">{t("common.profile.place")}</span></div>
        <div><span class="stat">{num(g.gamesPlayed)}</span><span class="muted">{t("common.profile.played")}</span></div>
      </div>
      {r && <p class="muted skill-line">μ {num(r.mu, 1)} ± σ {num(r.sigma, 1)} · {t("common.profile.ratedGames", { n: r.games })}</p>}
      {g.history.length > 0 ? <RatingLine points={g.history} /> : <p class="muted">{t("common.profile.noRated")}</p>}
    </article>
  );
}

export function ProfilePage({ playerId }: { playerId: string }): JSX.Element {
  const { me } = usePlayer();
  const [profile, setProfile] = useState<Profile>();
  const [titles, setTitles] = useState<Record<string, string>>({});
  const [error, setError] = useState("");
  const own = !playerId || playerId === me?.playerId;
  useEffect(() => {
    api.listGames({}).then((r) => setTitles(Object.fromEntries(r.games.map((x) => [x.name, x.title]))), () => {});
  }, []);
  useEffect(() => {
    if (own && !me) return;
    api.getProfile({ playerId: own ? "" : playerId }).then(setProfile, (e) => setError(errorText(e)));
  }, [playerId, me?.playerId]);
  if (own && !me) {
    return (
      <div class="page profile-page">
        <PageHeader title={t("common.profile.heading")} />
        <section class="panel"><p>{t("common.profile.signIn")}</p></section>
      </div>
    );
  }
  const p = profile?.player;
  const games = (profile?.games ?? []).filter((g) => g.gamesPlayed > 0 || g.rating);
  return (
    <div class="page profile-page" id="profile" data-player={p?.playerId ?? ""}>
      <PageHeader title={own ? t("common.profile.own") : t("common.profile.heading")} />
      {error && <div class="error" role="alert">{error}</div>}
      {!profile && !error && <p class="muted loading">{t("common.loading")}</p>}
      {profile && (
        <>
          <section class="panel profile-head">
            <span class="avatar big" aria-hidden="true">{(p?.name ?? "?").slice(0, 1).toUpperCase()}</span>
            <div>
              <h2 id="profile-name">{p?.name}</h2>
              <span class="muted">{p?.guest ? t("common.profile.guest") : t("common.profile.player")}</span>
            </div>
          </section>
          <section class="panel">
            <h2>{t("common.profile.ratings")}</h2>
            {games.length ? <div class="profile-games">{games.map((g) => <GameCard key={g.game} g={g} title={gameTitle(g.game, titles[g.game])} />)}</div>
              : <p class="muted" id="no-games">{t("common.profile.noGames")}</p>}
          </section>
          <section class="panel">
            <h2>{t("common.profile.recent")}</h2>
            {profile.recent.length ? (
              <ul class="recent-tables" id="recent">
                {profile.recent.map((x) => (
                  <li key={x.tableId} data-table={x.tableId}>
                    <a href={`#/table/${x.tableId}`}>
                      <b>{gameTitle(x.game, titles[x.game])}</b>
                      <span class="muted">{dateTime(x.createdAt)}{x.rated ? ` · ${t("common.badge.rated")}` : ""}</span>
                      <span class="recent-seats">{list(x.seats.map((s) => s.name || "?"))}</span>
                    </a>
                  </li>
                ))}
              </ul>
            ) : <p class="muted">{t("common.profile.noRecent")}</p>}
          </section>
        </>
      )}
    </div>
  );
}
