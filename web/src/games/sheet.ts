// The score sheet most games keep: one row of points per deal, summed per seat.
import { t } from "../i18n";
/** A sheet of `rows` (per deal, the points of each seat), headed by `what` a row is. */
export function sumSheet(names: string[], rows: number[][], what: string): { header: string[]; rows: string[][]; totals: string[] } {
  const totals = names.map((_, i) => rows.reduce((s, r) => s + (r[i] ?? 0), 0));
  return {
    header: [what, ...names],
    rows: rows.map((r, k) => [String(k + 1), ...r.map(String)]),
    totals: [t("games.total"), ...totals.map(String)],
  };
}
