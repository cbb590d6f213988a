// The language switcher: a small select with each language named in itself. The lobby shows it
// in its header; the table page places it where it fits (`<LanguagePicker />`, no props). The
// choice takes effect at once and is remembered in this browser (see setLanguage).
import type { JSX } from "preact";
import { LANGUAGES, setLanguage, t, useLanguage, type Language } from ".";
import "./i18n.css";

export function LanguagePicker({ id = "language" }: { id?: string }): JSX.Element {
  const lng = useLanguage();
  return (
    <label class="language-picker" title={t("common.language.label")}>
      <span class="language-icon" aria-hidden="true">🌐</span>
      <select id={id} class="language-select" value={lng} aria-label={t("common.language.label")}
        onChange={(e) => void setLanguage((e.target as HTMLSelectElement).value as Language)}>
        {LANGUAGES.map((l) => <option key={l.code} value={l.code} lang={l.code === "zh" ? "zh-Hans" : l.code}>{l.name}</option>)}
      </select>
    </label>
  );
}
