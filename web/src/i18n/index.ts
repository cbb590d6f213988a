// The one place strings shown to players come from. Messages are ICU (plurals, selects, numbers),
// kept per language and per area of the client in `<lang>/<area>.json`, with flat dotted keys:
//   t("table.leave.confirm")            -> en/table.json  { "leave.confirm": "Leave this table?" }
//   t("table.cardsLeft", { n: 3 })      -> "{n, plural, one {# card} other {# cards}}"
// Components re-render on a language change through `useLanguage()`.
import i18next from "i18next";
import ICU from "i18next-icu";
import { useEffect, useState } from "preact/hooks";
import enCommon from "./en/common.json";
import enErrors from "./en/errors.json";
import enGames from "./en/games.json";
import enTable from "./en/table.json";

export const AREAS = ["common", "table", "games", "errors"] as const;

const instance = i18next.createInstance();
void instance.use(ICU).init({
  lng: "en",
  fallbackLng: "en",
  ns: [...AREAS],
  defaultNS: "common",
  nsSeparator: ".",
  keySeparator: false, // keys inside an area are flat: "leave.confirm"
  resources: { en: { common: enCommon, table: enTable, games: enGames, errors: enErrors } },
  interpolation: { escapeValue: false }, // Preact escapes text
  initAsync: false,
});

/** The message `area.key` in the current language, with ICU `values`. */
export function t(key: string, values?: Record<string, string | number | Date>): string {
  return instance.t(key, values as Record<string, unknown>) as string;
}

export function language(): string {
  return instance.language;
}

/** Re-render the calling component when the language changes; returns the language. */
export function useLanguage(): string {
  const [lng, setLng] = useState(instance.language);
  useEffect(() => {
    const on = (l: string) => setLng(l);
    instance.on("languageChanged", on);
    return () => instance.off("languageChanged", on);
  }, []);
  return lng;
}

export { instance as i18n };
