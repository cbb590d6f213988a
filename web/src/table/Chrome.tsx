// The table page's chrome around the felt: the header (lobby, game and deal, the rules, sound,
// leave, the panels), the banner of the player's turn with its seconds, and the note of a move
// the server played for the player.
import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import { t } from "../i18n";
import { LanguagePicker } from "../i18n/LanguagePicker";
import { rulesHref } from "../rules/href";

export function TableHeader({ title, game, progress, role, mine, canLeave, onLeave, panel, onPanel, sound, onSound }: {
  title: string; game: string; progress: string; role: JSX.Element; mine: string; canLeave: boolean; onLeave: () => void;
  panel: string; onPanel: (p: "" | "log" | "scores") => void; sound: boolean; onSound: (on: boolean) => void;
}): JSX.Element {
  return (
    <header class="table-header">
      <a href="#/" class="back" aria-label={t("table.back.label")}>←&nbsp;<span class="back-word">{t("table.back")}</span></a>
      <div class="title">
        <h1>{title}</h1>
        <span class="progress">{progress}</span>
      </div>
      {rulesHref(game) && <a class="small-button rules-link" id="rules-link" href={rulesHref(game)} title={t("table.rules.title")}
        aria-label={t("table.rules.title")}>?<span class="wide-only">&nbsp;{t("table.rules")}</span></a>}
      <div id="role" data-seat={mine}>
        {role}
        {canLeave && <button type="button" id="leave" class="small-button" onClick={onLeave}
          aria-label={t("table.leave.label")}>{t("table.leave")}</button>}
      </div>
      <div class="header-buttons">
        {/* phones switch language in the lobby: the table's header has no room for it */}
        <span class="wide-only"><LanguagePicker id="table-language" /></span>
        <button type="button" id="sound" class="small-button icon-button" aria-pressed={sound} onClick={() => onSound(!sound)}
          title={sound ? t("table.sound.on") : t("table.sound.off")} aria-label={sound ? t("table.sound.on") : t("table.sound.off")}>
          <SoundIcon on={sound} /></button>
        <button type="button" id="show-log" class="small-button" aria-pressed={panel === "log"}
          onClick={() => onPanel(panel === "log" ? "" : "log")}>{t("table.panel.moves")}</button>
        <button type="button" id="show-scores" class="small-button" aria-pressed={panel === "scores"}
          onClick={() => onPanel(panel === "scores" ? "" : "scores")}>{t("table.panel.scores")}</button>
      </div>
    </header>
  );
}

export function SoundIcon({ on }: { on: boolean }): JSX.Element {
  return (
    <svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true" class="sound-icon">
      <path d="M4 9h4l5-4v14l-5-4H4z" fill="currentColor" />
      {on ? <path d="M16 8.5a5 5 0 0 1 0 7M18.5 6a8.5 8.5 0 0 1 0 12" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" />
        : <path d="M16 9l6 6M22 9l-6 6" stroke="currentColor" stroke-width="2" stroke-linecap="round" />}
    </svg>
  );
}

/** Seconds left until `until` (ms since the epoch), ticking once a second while shown. */
export function useSecondsLeft(until: number): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (until <= 0) return undefined;
    const id = setInterval(() => setNow(Date.now()), 500);
    return () => clearInterval(id);
  }, [until]);
  return until > 0 ? Math.max(0, Math.ceil((until - now) / 1000)) : 0;
}

/** "Your turn", with the seconds the timer leaves when the table has one. */
export function TurnBanner({ until }: { until: number }): JSX.Element {
  const left = useSecondsLeft(until);
  return (
    <div class={`turn-banner ${until > 0 && left <= 10 ? "hurry" : ""}`} id="turn-banner" role="status">
      <span class="turn-word">{t("table.turn.yours")}</span>
      {until > 0 && <span class="turn-seconds" data-seconds={left}>{t("table.turn.seconds", { n: left })}</span>}
    </div>
  );
}
