// The one place strings shown to players come from. Messages are ICU (plurals, selects, numbers),
// kept per language and per area of the client in `<lang>/<area>.json`, with flat dotted keys:
//   t("table.leave.confirm")            -> en/table.json  { "leave.confirm": "Leave this table?" }
//   t("table.cardsLeft", { n: 3 })      -> "{n, plural, one {# card} other {# cards}}"
// Components re-render on a language change through `useLanguage()`.
//
// The language: `?lang=xx` in the address, else the player's choice (localStorage
// "croupier.language", written only by `setLanguage`, i.e. the picker), else the browser's
// (navigator.languages, the first one we have), else English. English is bundled and is the
// fallback of every key; the other languages are loaded when first needed. The `options` area
// holds the words of the games' table options; the server's own (English) words stand for an
// option the catalogues do not name.
//
// A key missing from English is a bug: it is logged as a console error (the browser tests fail
// on console errors). With `?i18n=strict` in the address, a key missing from the current
// language is one too, and `window.croupierI18n` lets a test call `t`.
import i18next from "i18next";
import LanguageDetector from "i18next-browser-languagedetector";
import ICU from "i18next-icu";
import { useEffect, useState } from "preact/hooks";
import enCommon from "./en/common.json";
import enErrors from "./en/errors.json";
import enGames from "./en/games.json";
import enOptions from "./en/options.json";
import enTable from "./en/table.json";

export const AREAS = ["common", "table", "games", "errors", "options"] as const;
type Area = (typeof AREAS)[number];
type Catalogues = Record<Area, Record<string, string>>;

/** The languages the client speaks, each named in itself (the picker shows these names). */
export const LANGUAGES = [
  { code: "en", tag: "en", name: "English" },
  { code: "fr", tag: "fr", name: "Français" },
  { code: "de", tag: "de", name: "Deutsch" },
  { code: "pt", tag: "pt-PT", name: "Português" },
  { code: "zh", tag: "zh-Hans", name: "简体中文" },
] as const;
export type Language = (typeof LANGUAGES)[number]["code"];
const CODES: string[] = LANGUAGES.map((l) => l.code);
const STORE_KEY = "croupier.language";

// one loader per language: its catalogue of each area, in the order of AREAS (a dynamic import
// each: with esbuild's code splitting they are chunks loaded when the language is first chosen)
const LOADERS: Record<string, () => Promise<Catalogues>> = {
  fr: async () => areas(await Promise.all([
    import("./fr/common.json"), import("./fr/table.json"), import("./fr/games.json"), import("./fr/errors.json"),
    import("./fr/options.json")])),
  de: async () => areas(await Promise.all([
    import("./de/common.json"), import("./de/table.json"), import("./de/games.json"), import("./de/errors.json"),
    import("./de/options.json")])),
  pt: async () => areas(await Promise.all([
    import("./pt/common.json"), import("./pt/table.json"), import("./pt/games.json"), import("./pt/errors.json"),
    import("./pt/options.json")])),
  zh: async () => areas(await Promise.all([
    import("./zh/common.json"), import("./zh/table.json"), import("./zh/games.json"), import("./zh/errors.json"),
    import("./zh/options.json")])),
};

function areas(mods: { default: Record<string, string> }[]): Catalogues {
  return Object.fromEntries(AREAS.map((a, i) => [a, mods[i].default])) as Catalogues;
}

const strict = new URLSearchParams(location.search).get("i18n") === "strict";

const instance = i18next.createInstance();
void instance.use(LanguageDetector).use(ICU).init({
  supportedLngs: CODES,
  nonExplicitSupportedLngs: true, // "fr-CA" is French, "zh-CN" Chinese
  load: "languageOnly",
  fallbackLng: "en",
  ns: [...AREAS],
  defaultNS: "common",
  nsSeparator: ".",
  keySeparator: false, // keys inside an area are flat: "leave.confirm"
  resources: { en: { common: enCommon, table: enTable, games: enGames, errors: enErrors, options: enOptions } },
  partialBundledLanguages: true,
  interpolation: { escapeValue: false }, // Preact escapes text
  initAsync: false,
  detection: {
    order: ["querystring", "localStorage", "navigator"],
    lookupQuerystring: "lang",
    lookupLocalStorage: STORE_KEY,
    caches: [], // only an explicit choice is remembered (setLanguage)
  },
  saveMissing: true, // a key missing from every language, English included, reaches the handler
  missingKeyHandler: (_lngs, ns, key) => console.error(`i18n: missing message "${ns}.${key}"`),
});

const loaded = new Set<string>(["en"]);

async function load(lng: string): Promise<void> {
  if (loaded.has(lng) || !LOADERS[lng]) return;
  const cats = await LOADERS[lng]();
  for (const a of AREAS) instance.addResourceBundle(lng, a, cats[a], true, true);
  loaded.add(lng);
}

// the language chosen or detected ("fr-CA" counts as "fr"), whether or not its catalogues are in yet
function current(): Language {
  const l = (instance.language ?? "en").toLowerCase().split("-")[0];
  return (CODES.includes(l) ? l : "en") as Language;
}

// the BCP 47 tag of each language (LANGUAGES): Chinese is Simplified, Portuguese European (its
// number format, and "0 vazas", which its catalogue also writes out with =0)
const TAGS: Record<string, string> = Object.fromEntries(LANGUAGES.map((l) => [l.code, l.tag]));

function settle(lng: string): void {
  document.documentElement.lang = TAGS[lng] ?? lng;
  document.title = t("common.app.title");
}

/** The detected language's catalogues loaded: render after this, so no English flashes first. */
export const ready: Promise<void> = (async () => {
  const lng = current();
  try {
    await load(lng);
  } catch (err) {
    console.error(`i18n: could not load ${lng}`, err);
  }
  await instance.changeLanguage(lng); // re-resolves with the catalogues now there
  settle(current());
})();

/** Switches the language now and remembers it for the next visit. */
export async function setLanguage(lng: Language): Promise<void> {
  try {
    localStorage.setItem(STORE_KEY, lng);
  } catch {
    // storage refused (private mode): the choice lasts for this page only
  }
  await load(lng);
  await instance.changeLanguage(lng);
  settle(lng);
}

/** The message `area.key` in the current language, with ICU `values`. */
export function t(key: string, values?: Record<string, string | number | Date>): string {
  if (strict) {
    const lng = current();
    const dot = key.indexOf(".");
    if (lng !== "en" && instance.getResource(lng, key.slice(0, dot), key.slice(dot + 1)) === undefined) {
      console.error(`i18n: "${key}" has no ${lng} message`);
    }
  }
  return instance.t(key, values as Record<string, unknown>) as string;
}

/** The current language's code: "en", "fr", "de", "pt" or "zh". */
export function language(): Language {
  return current();
}

/** The BCP 47 tag for Intl: "zh-Hans", "pt-PT", else the language's code. */
export function locale(): string {
  const l = current();
  return TAGS[l] ?? l;
}

/** Re-render the calling component when the language changes; returns the language. */
export function useLanguage(): Language {
  const [lng, setLng] = useState(current());
  useEffect(() => {
    const on = () => setLng(current());
    instance.on("languageChanged", on);
    if (current() !== lng) on();
    return () => instance.off("languageChanged", on);
  }, []);
  return lng;
}

/** A number in the player's language: `num(12.3456, 1)` is "12.3" in English, "12,3" in French. */
export function num(n: number, digits?: number): string {
  const opts = digits === undefined ? {} : { minimumFractionDigits: digits, maximumFractionDigits: digits };
  return new Intl.NumberFormat(locale(), opts).format(n);
}

/** A moment (unix seconds) as a date and time in the player's language. */
export function dateTime(unix: number): string {
  return new Intl.DateTimeFormat(locale(), { dateStyle: "medium", timeStyle: "short" }).format(new Date(unix * 1000));
}

/** How long ago a moment (unix seconds) was, in the player's language: "5 min ago", "vor 2 Std.". */
export function ago(unix: number, now = Date.now() / 1000): string {
  const s = Math.max(0, now - unix);
  const f = new Intl.RelativeTimeFormat(locale(), { numeric: "auto", style: "short" });
  if (s < 60) return f.format(0, "second");
  if (s < 3600) return f.format(-Math.floor(s / 60), "minute");
  if (s < 86400) return f.format(-Math.floor(s / 3600), "hour");
  return f.format(-Math.floor(s / 86400), "day");
}

/** Names as a list in the player's language: "Ann, Bob, Cy" or "Ann、Bob、Cy". */
export function list(items: string[]): string {
  // Intl.ListFormat is ES2021; every browser the client runs in has it
  const ListFormat = (Intl as unknown as { ListFormat: new (l: string, o: object) => { format(x: string[]): string } }).ListFormat;
  return new ListFormat(locale(), { type: "unit", style: "short" }).format(items);
}

/** A table option's label or documentation in the player's language, else the server's words. */
export function optionWords(game: string, option: string, part: "label" | "doc", serverWords: string): string {
  const key = `options.${game}.${option}.${part}`;
  return instance.exists(key) ? t(key) : serverWords;
}

/** A game's name as players of this language call it ("斗地主"), else the server's title, else
 * its API name. */
export function gameTitle(game: string, serverTitle?: string): string {
  const key = `common.gameName.${game}`;
  return instance.exists(key) ? t(key) : serverTitle || game;
}

if (strict) (window as unknown as Record<string, unknown>).croupierI18n = { t, setLanguage, language };

export { instance as i18n };
