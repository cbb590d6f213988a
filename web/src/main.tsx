// Croupier's browser client: Preact components over the Connect client generated from
// protos/. The lobby and the table page are routed by the URL's hash.
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { Lobby } from "./lobby/Lobby";
import { TablePage } from "./table/TablePage";

// "#/table/<id>", or "#/table/<id>?plain": the generic table, as a game without a web module
// of its own gets
function route(): string | null {
  const m = location.hash.match(/^#\/table\/([\w-]+)(\?plain)?/);
  return m ? m[0] : null;
}

function App() {
  const [table, setTable] = useState(route());
  useEffect(() => {
    const on = () => setTable(route());
    window.addEventListener("hashchange", on);
    return () => window.removeEventListener("hashchange", on);
  }, []);
  if (!table) return <Lobby />;
  const [id, plain] = table.slice("#/table/".length).split("?");
  return <TablePage key={table} tableId={id} plain={plain !== undefined} />;
}

const root = document.getElementById("app")!;
root.textContent = ""; // the "Loading…" of index.html
render(<App />, root);
