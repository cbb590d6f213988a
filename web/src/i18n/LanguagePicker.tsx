// The language switcher: a small select with each language named in itself. The lobby shows it
// in its header; the table page places it where it fits (`<LanguagePicker />`, no props). The
// choice takes effect at once and is remembered in this browser (see setLanguage).
import type { JSX } from "preact";
import { LANGUAGES, setLanguage, t, useLanguage, type Language } from ".";
import css from "./i18n.css" with { type: "text" };
import { addStyles } from "./styles";

addStyles("i18n", css);

export function LanguagePicker({ id = "language" }: { id?: string }): JSX.Element {
  const lng = useLanguage();
  return (
    <label class="language-picker" title={t("common.language.label")}>
      <svg class="language-icon" viewBox="0 0 24 24" width="18" height="18" aria-hidden="true">
        <g fill="none" stroke="currentColor" stroke-width="1.8">
          <circle cx="12" cy="12" r="9" /><path d="M3 12h18M12 3c2.6 2.6 3.8 5.6 3.8 9s-1.2 6.4-3.8 9c-2.6-2.6-3.8-5.6-3.8-9s1.2-6.4 3.8-9z" />
        </g>
      </svg>
      <select id={id} class="language-select" value={lng} aria-label={t("common.language.label")}
        onChange={(e) => void setLanguage((e.target as HTMLSelectElement).value as Language)}>
        {LANGUAGES.map((l) => <option key={l.code} value={l.code} lang={l.tag}>{l.name}</option>)}
      </select>
    </label>
  );
}
