// Checks the message catalogues of src/i18n: every key of each English catalogue is in every
// other language (and no key is there that English lacks), every message parses as ICU for its
// language, uses the same arguments as its English message, gives every plural an `other`,
// and formats with sample values. Prints the problems as JSON lines; exit status 1 if any.
// A key English no longer has (stale) is a problem with --strict, else a warning on stderr:
// it shows nothing to anybody, and a branch may translate a catalogue before its English lands.
// Usage: node tools/check-catalogues.mjs [--strict] [lang ...]   (default: every language)
import { readdirSync, readFileSync, existsSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { IntlMessageFormat } from "intl-messageformat";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "src", "i18n");
const TYPE = { literal: 0, argument: 1, number: 2, date: 3, time: 4, select: 5, plural: 6, pound: 7, tag: 8 };
const args = process.argv.slice(2);
const strict = args.includes("--strict");
const problems = [];
const warnings = [];
const say = (lang, area, key, problem) => problems.push({ lang, area, key, problem });

/** The arguments a message uses, by name, with the kind of value each takes. */
function argsOf(ast, out = new Map()) {
  for (const el of ast) {
    if (el.type === TYPE.argument) out.set(el.value, out.get(el.value) ?? "string");
    else if (el.type === TYPE.number || el.type === TYPE.plural) out.set(el.value, "number");
    else if (el.type === TYPE.date || el.type === TYPE.time) out.set(el.value, "date");
    else if (el.type === TYPE.select) out.set(el.value, "select");
    if (el.options) for (const opt of Object.values(el.options)) argsOf(opt.value, out);
    if (el.children) argsOf(el.children, out);
  }
  return out;
}

function pluralsWithoutOther(ast, out = []) {
  for (const el of ast) {
    if (el.type === TYPE.plural && !("other" in el.options)) out.push(el.value);
    if (el.options) for (const opt of Object.values(el.options)) pluralsWithoutOther(opt.value, out);
  }
  return out;
}

function parse(lang, area, key, text) {
  try {
    const mf = new IntlMessageFormat(text, lang === "zh" ? "zh-Hans" : lang);
    return { mf, ast: mf.getAst() };
  } catch (err) {
    say(lang, area, key, `does not parse as ICU: ${err.message}`);
    return null;
  }
}

function load(lang, area) {
  const file = join(root, lang, `${area}.json`);
  if (!existsSync(file)) return null;
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    say(lang, area, "", `not JSON: ${err.message}`);
    return {};
  }
}

const areas = readdirSync(join(root, "en")).filter((f) => f.endsWith(".json")).map((f) => f.slice(0, -5));
const all = readdirSync(root, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
const chosen = args.filter((a) => !a.startsWith("--"));
const langs = chosen.length ? chosen : all;

for (const area of areas) {
  const en = load("en", area) ?? {};
  const enArgs = {};
  for (const [key, text] of Object.entries(en)) {
    const p = parse("en", area, key, text);
    if (p) enArgs[key] = argsOf(p.ast);
  }
  for (const lang of langs) {
    if (lang === "en") continue;
    const cat = load(lang, area);
    if (cat === null) {
      say(lang, area, "", "no catalogue file");
      continue;
    }
    for (const key of Object.keys(en)) if (!(key in cat)) say(lang, area, key, "missing");
    for (const [key, text] of Object.entries(cat)) {
      if (!(key in en)) {
        (strict ? problems : warnings).push({ lang, area, key, problem: "not in the English catalogue (stale)" });
        continue;
      }
      if (typeof text !== "string") {
        say(lang, area, key, "not a string");
        continue;
      }
      const p = parse(lang, area, key, text);
      if (!p || !enArgs[key]) continue;
      const mine = argsOf(p.ast);
      const want = [...enArgs[key].keys()].sort().join(",");
      const got = [...mine.keys()].sort().join(",");
      if (want !== got) say(lang, area, key, `arguments {${got}} where English has {${want}}`);
      for (const name of pluralsWithoutOther(p.ast)) say(lang, area, key, `plural of ${name} without "other"`);
      const sample = Object.fromEntries([...enArgs[key]].map(([n, kind]) =>
        [n, kind === "number" ? 2 : kind === "date" ? new Date(0) : kind === "select" ? "other" : "x"]));
      try {
        p.mf.format(sample);
      } catch (err) {
        say(lang, area, key, `does not format: ${err.message}`);
      }
    }
  }
}
for (const p of problems) console.log(JSON.stringify(p));
if (warnings.length) console.error(`${warnings.length} stale keys (not failing without --strict): ${warnings.map((w) => `${w.lang}/${w.area}:${w.key}`).slice(0, 5).join(" ")}…`);
process.exit(problems.length ? 1 : 0);
