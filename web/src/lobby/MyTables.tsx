// "My tables" (ListMyTables): the signed-in player's unfinished tables to resume (their turn
// first to the eye), and the recently finished ones to look at again. The seat is the
// player's own: it opens from any tab or device.
import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, errorText } from "../api";
import { TableStatus, type MyTable } from "../gen/croupier/v1/croupier_pb";
import { list, t } from "../i18n";
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
  const row = (mt: MyTable) => {
    const table = mt.table!;
    const others = table.seats.filter((_, i) => i !== mt.seat).map((s) => s.name || (s.occupied ? t("common.seat.player") : t("common.seat.open")));
    return (
      <li key={table.tableId} class={`my-table ${mt.myTurn ? "my-turn" : ""}`} data-table={table.tableId}
        data-status={TableStatus[table.status]}>
        <div class="my-table-text">
          <b>{titleOf(table.game)}</b>
          {mt.myTurn && <span class="badge turn">{t("common.myTables.yourTurn")}</span>}
          {table.rated && <span class="badge rated">{t("common.badge.rated")}</span>}
          <span class="muted my-table-others">{t("common.myTables.with", { names: list(others) })}</span>
        </div>
        <a class={`button-link ${over(mt) ? "" : "primary"} my-table-open`} href={`#/table/${table.tableId}`}>
          {over(mt) ? t("common.myTables.view") : t("common.myTables.resume")}</a>
      </li>
    );
  };
  return (
    <section class="panel my-tables" id="my-tables">
      <h2>{t("common.myTables.heading")}</h2>
      {error && <p class="ladder-error" role="alert">{error}</p>}
      {tables === null && !error && <p class="muted">{t("common.myTables.loading")}</p>}
      {tables !== null && !rows.length && <p class="muted" id="my-tables-empty">{t("common.myTables.empty")}</p>}
      {open.length > 0 && <ul class="my-table-list" id="my-tables-open">{open.map(row)}</ul>}
      {done.length > 0 && (
        <>
          <h3 class="my-tables-sub">{t("common.myTables.finished")}</h3>
          <ul class="my-table-list" id="my-tables-done">{done.map(row)}</ul>
        </>
      )}
    </section>
  );
}
