// Croupier's browser client: Preact components over the Connect client generated from
// protos/. The pages are routed by the URL's hash; the signed-in player's token is checked
// (WhoAmI) before the first page asks anything with it.
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { Lobby } from "./lobby/Lobby";
import { Leaderboard } from "./players/Leaderboard";
import { MatchPage } from "./players/MatchPage";
import { ProfilePage } from "./players/Profile";
import { ready, t, useLanguage } from "./i18n";
import { checkIdentity, usePlayer } from "./players/session";
import { LazyRulesPage } from "./rules/LazyRulesPage";
import { TablePage } from "./table/TablePage";

// "#/table/<id>", with "?plain" (the generic table, as a game without a web module of its own
// gets) and "?seat=<n>" (a seat link: take or resume that seat); "#/match/<ticket>" (waiting
// for a match); "#/leaderboard/<game>"; "#/profile" (one's own) or "#/profile/<player id>";
// "#/rules/<game>" (a game's rulebook, readable before the identity is checked)
function App() {
  const [hash, setHash] = useState(location.hash);
  const { checked } = usePlayer();
  useLanguage();
  useEffect(() => {
    const on = () => setHash(location.hash);
    window.addEventListener("hashchange", on);
    return () => window.removeEventListener("hashchange", on);
  }, []);
  const [path, query = ""] = hash.replace(/^#/, "").split("?");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  if (parts[0] === "rules") return <LazyRulesPage key={parts[1] ?? ""} game={parts[1] ?? ""} />;
  if (!checked) return <p class="loading">{t("common.loading")}</p>;
  const q = new URLSearchParams(query);
  if (parts[0] === "table" && /^[\w-]+$/.test(parts[1] ?? "")) {
    const seat = q.get("seat");
    // a seat link's "?seat=" is dropped from the address once taken: the same page goes on
    return <TablePage key={`${parts[1]}${q.has("plain") ? "?plain" : ""}`} tableId={parts[1]} plain={q.has("plain")}
      seatLink={seat !== null && /^\d+$/.test(seat) ? Number(seat) : undefined} />;
  }
  if (parts[0] === "match" && parts[1]) return <MatchPage key={parts[1]} ticketId={parts[1]} />;
  if (parts[0] === "leaderboard") return <Leaderboard key={parts[1] ?? ""} game={parts[1] ?? ""} />;
  if (parts[0] === "profile") return <ProfilePage key={parts[1] ?? "me"} playerId={parts[1] ?? ""} />;
  return <Lobby />;
}

const root = document.getElementById("app")!;
void ready.then(() => {
  root.textContent = ""; // the suits of index.html, shown while loading
  render(<App />, root);
});
void checkIdentity();
