// The table's dialogs: which of several moves a selection means, the summary of a finished
// deal, the running score sheet and the final winner screen.
import type { ComponentChildren, JSX } from "preact";
import { useEffect, useRef } from "preact/hooks";
import type { DealSummary, ScoreSheet } from "../games/types";

export function Modal({ id, title, children, onClose, blocking = true }: {
  id: string; title: string; children: ComponentChildren; onClose?: () => void; blocking?: boolean;
}): JSX.Element {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    box.current?.querySelector<HTMLElement>("button")?.focus();
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
    <Modal id="choice" title="These cards make more than one move: which one?" onClose={onCancel}>
      <div class="choice-list">
        {moves.map((m) => <button type="button" class="choice" data-move={m} key={m} onClick={() => onPick(m)}>{label(m)}</button>)}
      </div>
      <button type="button" class="secondary" onClick={onCancel}>Cancel</button>
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

export function SummaryBody({ summary, names }: { summary: DealSummary; names: string[] }): JSX.Element {
  return (
    <div class="summary">
      <p class="summary-title">{summary.title}</p>
      <ul class="summary-lines">{summary.lines.map((l, i) => <li key={i}>{l}</li>)}</ul>
      <table class="summary-scores" data-scores={JSON.stringify(summary.scores)}>
        <thead><tr><th /><th>{summary.scoreLabel}</th></tr></thead>
        <tbody>{names.map((n, i) => <tr key={i} data-seat={i}><td>{n}</td><td class="score">{summary.scores[i] > 0 && summary.scoreLabel === "points" ? `+${summary.scores[i]}` : summary.scores[i]}</td></tr>)}</tbody>
      </table>
    </div>
  );
}

export function DealSummaryDialog({ deal, summary, names, sheet, onClose, blocking }: {
  deal: number; summary: DealSummary; names: string[]; sheet: ScoreSheet; onClose: () => void; blocking: boolean;
}): JSX.Element {
  return (
    <Modal id="deal-summary" title={`End of deal ${deal + 1}`} onClose={onClose} blocking={blocking}>
      <div data-deal={deal}>
        <SummaryBody summary={summary} names={names} />
        <h3>Score sheet</h3>
        <SheetTable sheet={sheet} />
      </div>
      <button type="button" id="summary-close" class="primary" onClick={onClose}>Continue</button>
    </Modal>
  );
}
