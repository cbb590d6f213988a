// The final screen: the winner, the final score as the game counts it, the last deal, the
// whole score sheet; the record to download and a new table like this one.
import { toJson } from "@bufbuild/protobuf";
import type { ComponentChildren, JSX } from "preact";
import { api, auth, errorText, joinTable, tokenFor } from "../api";
import type { GameModule } from "../games/types";
import { GameRecordSchema, SeatKind, type Table, type TableView } from "../gen/croupier/v1/croupier_pb";
import { Modal, SheetTable, SummaryBody } from "./Dialogs";
import { t } from "../i18n";

async function download(tableId: string, onError: (e: string) => void): Promise<void> {
  try {
    const record = await api.exportRecord({ tableId }, auth(tokenFor(tableId)?.token));
    const text = JSON.stringify(toJson(GameRecordSchema, record), null, 1);
    const link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([text], { type: "application/json" }));
    link.download = `croupier-${tableId}.json`;
    link.click();
    setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
  } catch (err) {
    onError(errorText(err));
  }
}

// A new table like a finished one: same game, players, options and seats (a person's seat
// stays a person's, a bot's keeps its level); whoever played here sits down at the same seat,
// a spectator watches. A fixed deck is never shown (Table.fixedDeck only): the new table
// deals from its own seed instead. The label named the old table (a tournament's), not this.
async function again(table: Table, mine: number | null, onError: (e: string) => void): Promise<void> {
  const options = Object.fromEntries(Object.entries(table.options ?? {})
    .filter(([name]) => name !== "label"));
  const seats = table.seats.map((s) => (s.kind === SeatKind.BOT ? { kind: SeatKind.BOT, botLevel: s.botLevel } : { kind: SeatKind.HUMAN }));
  try {
    const fresh = await api.createTable({ game: table.game, players: table.players, seats, options });
    if (mine !== null) await joinTable(fresh.tableId, mine);
    else location.hash = `#/table/${fresh.tableId}`;
  } catch (err) {
    onError(errorText(err));
  }
}

export function GameOver<G>({ view, game, g, names, mine, open, onToggle, onError, felt }: {
  view: TableView; game: GameModule<G>; g: G; names: string[]; mine: number | null; open: boolean;
  onToggle: () => void; onError: (e: string) => void; felt?: ComponentChildren;
}): JSX.Element {
  const table = view.table!;
  const r = view.result!;
  const winners = r.winners.map((s) => names[s]);
  const youWin = mine !== null && r.winners.includes(mine);
  const headline = r.winners.length === names.length && names.length > 1 ? t("table.over.draw")
    : youWin ? t("table.over.youWin") : winners.length ? t("table.over.win", { names: winners.join(" & "), n: winners.length }) : t("table.over.noWinner");
  const last = game.deals(g) - 1;
  const summary = last >= 0 ? game.summary(g, last, names) : null;
  const buttons = (
    <div class="action-row">
      <button type="button" id="record" class="secondary" onClick={() => void download(table.tableId, onError)}>{t("table.over.record")}</button>
      <button type="button" id="play-again" class="primary" onClick={() => void again(table, mine, onError)}>
        {mine !== null ? t("table.over.again") : t("table.over.newLike")}</button>
      <button type="button" id="game-over-toggle" class="secondary" onClick={onToggle}>{open ? t("table.over.look") : t("table.over.show")}</button>
    </div>
  );
  if (!open) return <div id="game-over" class="game-over-bar" role="status"><b>{t("table.over.bar", { headline })}</b> {buttons}</div>;
  return (
    <Modal id="game-over" title={t("table.over.title", { headline })} onClose={onToggle}>
      <div class="final" data-winners={JSON.stringify(r.winners)} data-totals={JSON.stringify(r.totals.map(Number))}>
        <table class="summary-scores final-scores">
          <thead><tr><th /><th>{game.finalLabel ?? t("table.over.final")}</th></tr></thead>
          <tbody>{names.map((n, i) => (
            <tr key={i} class={r.winners.includes(i) ? "winner" : ""}><td>{r.winners.includes(i) ? <span class="winner-star" aria-label={t("table.over.winner")}>★ </span> : ""}{n}</td>
              <td class="score">{game.finalScore ? game.finalScore(g, Number(r.totals[i] ?? 0), i) : String(r.totals[i] ?? 0)}</td></tr>
          ))}</tbody>
        </table>
      </div>
      {felt && <><h3>{t("table.summary.felt")}</h3><div class="summary-felt">{felt}</div></>}
      {summary && (
        <div data-deal={last}>
          <h3>{t("table.over.lastDeal")}</h3>
          <SummaryBody summary={summary} names={names} faces={game} />
        </div>
      )}
      <h3>{t("table.summary.sheet")}</h3>
      <SheetTable sheet={game.sheet(g, names)} />
      {buttons}
    </Modal>
  );
}
