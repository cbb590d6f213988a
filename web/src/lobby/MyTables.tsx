// "My tables" (ListMyTables): the signed-in player's unfinished tables to resume (their turn
// first to the eye), and the recently finished ones to look at again. The seat is the
// player's own: it opens from any tab or device.
import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, errorText } from "../api";
import { TableStatus, type MyTable } from "../gen/croupier/v1/croupier_pb";
import { usePlayer } from "../players/session";

const REFRESH_MS = 4000;
const SHOWN = 12;

export function MyTables({ titleOf }: { titleOf: (game: string) => string }): JSX.Element | null {
  const { me } = usePlayer();
  const [tables, setTables] = useState<MyTable[] | null>(null);
  const [error, setError] = useState("");
  useEffect(() => {
    if (!me) return;
    let stop = false;
    const refresh = async () => {
      try {
        const reply = await api.listMyTables({ includeFinished: true, limit: SHOWN });
        if (stop) return;
        setTables(reply.tables);
        setError("");
      } catch (err) {
        if (!stop) setError(errorText(err));
      }
    };
    void refresh();
    const timer = window.setInterval(refresh, REFRESH_MS);
    return () => {
      stop = true;
      window.clearInterval(timer);
    };
  }, [me?.playerId]);
  if (!me) return null;
  const over = (t: MyTable) => [TableStatus.FINISHED, TableStatus.ABANDONED].includes(t.table!.status);
  const rows = (tables ?? []).filter((t) => t.table);
  const open = rows.filter((t) => !over(t));
  const done = rows.filter(over);
  const row = (t: MyTable) => {
    const table = t.table!;
    const others = table.seats.filter((_, i) => i !== t.seat).map((s) => s.name || (s.occupied ? "player" : "open seat"));
    return (
      <li key={table.tableId} class={`my-table ${t.myTurn ? "my-turn" : ""}`} data-table={table.tableId}
        data-status={TableStatus[table.status]}>
        <div class="my-table-text">
          <b>{titleOf(table.game)}</b>
          {t.myTurn && <span class="badge turn">your turn</span>}
          {table.rated && <span class="badge rated">rated</span>}
          <span class="muted my-table-others">with {others.join(", ")}</span>
        </div>
        <a class={`button-link ${over(t) ? "" : "primary"} my-table-open`} href={`#/table/${table.tableId}`}>
          {over(t) ? "View" : "Resume"}</a>
      </li>
    );
  };
  return (
    <section class="panel my-tables" id="my-tables">
      <h2>My tables</h2>
      {error && <p class="ladder-error" role="alert">{error}</p>}
      {tables === null && !error && <p class="muted">Loading your tables…</p>}
      {tables !== null && !rows.length && <p class="muted" id="my-tables-empty">No table yet: “Play now” finds you one.</p>}
      {open.length > 0 && <ul class="my-table-list" id="my-tables-open">{open.map(row)}</ul>}
      {done.length > 0 && (
        <>
          <h3 class="my-tables-sub">Finished</h3>
          <ul class="my-table-list" id="my-tables-done">{done.map(row)}</ul>
        </>
      )}
    </section>
  );
}
