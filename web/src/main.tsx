// Croupier's browser client: Preact components over the Connect client generated from
// protos/. The lobby and the table page are routed by the URL's hash.
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { Lobby } from "./lobby/Lobby";
import { TablePage } from "./table/TablePage";

function route(): string | null {
  const m = location.hash.match(/^#\/table\/([\w-]+)/);
  return m ? m[1] : null;
}

function App() {
  const [table, setTable] = useState(route());
  useEffect(() => {
    const on = () => setTable(route());
    window.addEventListener("hashchange", on);
    return () => window.removeEventListener("hashchange", on);
  }, []);
  return table ? <TablePage key={table} tableId={table} /> : <Lobby />;
}

const root = document.getElementById("app")!;
root.textContent = ""; // the "Loading…" of index.html
render(<App />, root);
