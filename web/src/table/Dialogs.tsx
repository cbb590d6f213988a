// The table's dialogs: which of several moves a selection means, the summary of a finished
// deal, the running score sheet and the final winner screen.
import type { ComponentChildren, JSX } from "preact";
import { useEffect, useRef } from "preact/hooks";
import type { Back, Face } from "../cards/faces";
import type { DealSummary, ScoreSheet } from "../games/types";
import { t } from "../i18n";
import { CardRow } from "./bits";
import { useSecondsLeft } from "./Chrome";

export function Modal({ id, title, children, onClose, blocking = true }: {
  id: string; title: string; children: ComponentChildren; onClose?: () => void; blocking?: boolean;
}): JSX.Element {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    // the dialog opens at its top, the headline in sight: the first button may be far below
    box.current?.querySelector<HTMLElement>("button")?.focus({ preventScroll: true });
    if (box.current) box.current.scrollTop = 0;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape" && onClose) onClose();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);
  return (
    <div class={`modal-backdrop ${blocking ? "" : "passive"}`}>
      <div class="modal" id={id} role="dialog" aria-modal={blocking} aria-labelledby={`${id}-title`} ref={box}>
        <h2 id={`${id}-title`}>{title}</h2>
        {children}
      </div>
    </div>
  );
}

export function ChoiceDialog({ moves, label, onPick, onCancel }: {
  moves: string[]; label: (m: string) => string; onPick: (m: string) => void; onCancel: () => void;
}): JSX.Element {
  return (
    <Modal id="choice" title={t("table.choice.title")} onClose={onCancel}>
      <div class="choice-list">
        {moves.map((m) => <button type="button" class="choice" data-move={m} key={m} onClick={() => onPick(m)}>{label(m)}</button>)}
      </div>
      <button type="button" class="secondary" onClick={onCancel}>{t("table.cancel")}</button>
    </Modal>
  );
}

export function SheetTable({ sheet }: { sheet: ScoreSheet }): JSX.Element {
  return (
    <div class="sheet-wrap">
      <table class="score-sheet">
        <thead><tr>{sheet.header.map((h, i) => <th key={i}>{h}</th>)}</tr></thead>
        <tbody>{sheet.rows.map((r, k) => <tr key={k}>{r.map((c, i) => <td key={i}>{c}</td>)}</tr>)}</tbody>
        {sheet.totals && <tfoot><tr>{sheet.totals.map((c, i) => <td key={i}>{c}</td>)}</tr></tfoot>}
      </table>
    </div>
  );
}

/** How a game draws its cards, for the hands a summary lays down. */
export interface Faces { face: (code: string) => Face | null; back: Back }

export function SummaryBody({ summary, names, faces }: { summary: DealSummary; names: string[]; faces?: Faces }): JSX.Element {
  return (
    <div class="summary">
      <p class="summary-title">{summary.title}</p>
      <ul class="summary-lines">{summary.lines.map((l, i) => <li key={i}>{l}</li>)}</ul>
      {faces && !!summary.hands?.length && (
        <div class="summary-hands" id="summary-hands">
          <h3>{t("table.summary.hands")}</h3>
          {summary.hands.map((h) => (
            <div class="shown-hand" key={h.seat} data-seat={h.seat} data-cards={h.cards.join(" ")}>
              <span class="played-by">{names[h.seat]}</span>
              <CardRow cards={h.cards} face={faces.face} back={faces.back} small cls="played-cards" />
            </div>
          ))}
        </div>
      )}
      <table class="summary-scores" data-scores={JSON.stringify(summary.scores)}>
        <thead><tr><th /><th>{summary.scoreLabel}</th></tr></thead>
        <tbody>{names.map((n, i) => <tr key={i} data-seat={i}><td>{n}</td><td class="score">{summary.scores[i] > 0 && summary.scoreLabel === "points" ? `+${summary.scores[i]}` : summary.scores[i]}</td></tr>)}</tbody>
      </table>
    </div>
  );
}

/** The end of a deal: how it was scored, the sheet so far, and the next deal, which starts by
 * itself when the server's pause is over (`nextAt`, ms since the epoch; 0: no pause). */
export function DealSummaryDialog({ deal, summary, names, sheet, onClose, blocking, nextAt, felt, faces }: {
  deal: number; summary: DealSummary; names: string[]; sheet: ScoreSheet; onClose: () => void; blocking: boolean; nextAt: number;
  felt?: ComponentChildren; faces?: Faces;
}): JSX.Element {
  const left = useSecondsLeft(nextAt);
  const closeRef = useRef(onClose);
  closeRef.current = onClose;
  useEffect(() => {
    if (nextAt > 0 && left === 0) closeRef.current();
  }, [left, nextAt]);
  return (
    <Modal id="deal-summary" title={t("table.summary.title", { n: deal + 1 })} onClose={onClose} blocking={blocking}>
      <div data-deal={deal}>
        {felt && <><h3>{t("table.summary.felt")}</h3><div class="summary-felt" id="summary-felt">{felt}</div></>}
        <SummaryBody summary={summary} names={names} faces={faces} />
        <h3>{t("table.summary.sheet")}</h3>
        <SheetTable sheet={sheet} />
      </div>
      <button type="button" id="summary-close" class="primary" onClick={onClose}>
        {nextAt > 0 ? t("table.summary.next.in", { n: left }) : t("table.summary.next")}</button>
    </Modal>
  );
}

/** Leaving gives the seat up (a bot plays it): asked first. */
export function LeaveDialog({ onLeave, onStay }: { onLeave: () => void; onStay: () => void }): JSX.Element {
  return (
    <Modal id="leave-dialog" title={t("table.leave.title")} onClose={onStay}>
      <p>{t("table.leave.confirm")}</p>
      <div class="action-row">
        <button type="button" id="leave-stay" class="primary" onClick={onStay}>{t("table.leave.stay")}</button>
        <button type="button" id="leave-confirm" class="secondary danger" onClick={onLeave}>{t("table.leave.go")}</button>
      </div>
    </Modal>
  );
}

/** An announcement binds the party and cannot be taken back: asked once before it is sent. */
export function CallDialog({ label, onCall, onCancel }: { label: string; onCall: () => void; onCancel: () => void }): JSX.Element {
  return (
    <Modal id="call-dialog" title={t("table.call.title")} onClose={onCancel}>
      <p>{t("table.call.confirm", { call: label })}</p>
      <div class="action-row">
        <button type="button" id="call-confirm" class="primary" onClick={onCall}>{t("table.call.go", { call: label })}</button>
        <button type="button" id="call-cancel" class="secondary" onClick={onCancel}>{t("table.call.cancel")}</button>
      </div>
    </Modal>
  );
}
