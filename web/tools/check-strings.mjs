// Finds text shown to players that does not come from a catalogue, in the TypeScript AST of the
// client's sources: words written into JSX (element text, the text-bearing attributes, string
// literals in `{...}` children), and `t("area.key")` calls whose key the English catalogue of
// that area does not have (a template key such as t(`common.level.${x}`) needs at least one key
// under its fixed start). Prints one JSON line per finding; exit status 1 if any.
// Usage: node tools/check-strings.mjs [path under src ...]   (default: all of src but gen/)
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const web = join(dirname(fileURLToPath(import.meta.url)), "..");
const src = join(web, "src");
// attributes and props that carry words to the player
const WORDY = new Set(["title", "aria-label", "aria-description", "placeholder", "alt", "label", "why", "summary", "message", "text", "heading"]);
const WORDS = /\p{L}{2,}/u;
const findings = [];

const catalogues = {};
function catalogue(area) {
  if (!(area in catalogues)) {
    const file = join(src, "i18n", "en", `${area}.json`);
    catalogues[area] = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : null;
  }
  return catalogues[area];
}

function files(path) {
  if (statSync(path).isDirectory()) {
    if (path === join(src, "gen")) return [];
    return readdirSync(path).flatMap((f) => files(join(path, f)));
  }
  return /\.tsx?$/.test(path) && !path.endsWith(".d.ts") ? [path] : [];
}

function report(sf, node, kind, text) {
  const { line } = sf.getLineAndCharacterOfPosition(node.getStart(sf));
  findings.push({ file: relative(web, sf.fileName), line: line + 1, kind, text: text.trim().slice(0, 80) });
}

/** String literals in an expression whose value is shown as it is (not a call's arguments). */
function literals(sf, expr) {
  if (!expr) return;
  if (ts.isStringLiteral(expr) || ts.isNoSubstitutionTemplateLiteral(expr)) {
    if (WORDS.test(expr.text)) report(sf, expr, "literal", expr.text);
  } else if (ts.isTemplateExpression(expr)) {
    const parts = [expr.head.text, ...expr.templateSpans.map((s) => s.literal.text)].join(" ");
    if (WORDS.test(parts)) report(sf, expr, "literal", parts);
    for (const span of expr.templateSpans) literals(sf, span.expression);
  } else if (ts.isConditionalExpression(expr)) {
    literals(sf, expr.whenTrue);
    literals(sf, expr.whenFalse);
  } else if (ts.isBinaryExpression(expr)) {
    literals(sf, expr.left);
    literals(sf, expr.right);
  } else if (ts.isParenthesizedExpression(expr)) {
    literals(sf, expr.expression);
  }
}

function checkKey(sf, node, arg) {
  let key;
  let prefix = false;
  if (ts.isStringLiteral(arg) || ts.isNoSubstitutionTemplateLiteral(arg)) key = arg.text;
  else if (ts.isTemplateExpression(arg)) {
    key = arg.head.text;
    prefix = true;
  } else return;
  const dot = key.indexOf(".");
  const area = dot > 0 ? key.slice(0, dot) : "";
  const rest = key.slice(dot + 1);
  const cat = area ? catalogue(area) : null;
  if (!cat) return report(sf, node, "unknown-area", key);
  const known = prefix ? Object.keys(cat).some((k) => k.startsWith(rest)) : rest in cat;
  if (!known) report(sf, node, "missing-key", key);
}

function visit(sf, node) {
  if (ts.isJsxText(node)) {
    const text = node.text.replace(/&[a-z]+;/g, " "); // entities (&nbsp;) are no words
    if (WORDS.test(text)) report(sf, node, "literal", node.text);
  } else if (ts.isJsxAttribute(node)) {
    const name = node.name.getText(sf);
    if (WORDY.has(name) && node.initializer) {
      if (ts.isStringLiteral(node.initializer)) {
        if (WORDS.test(node.initializer.text)) report(sf, node, "literal", `${name}="${node.initializer.text}"`);
      } else if (ts.isJsxExpression(node.initializer)) literals(sf, node.initializer.expression);
    }
  } else if (ts.isJsxExpression(node) && node.parent && (ts.isJsxElement(node.parent) || ts.isJsxFragment(node.parent))) {
    literals(sf, node.expression);
  } else if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === "t" && node.arguments.length) {
    checkKey(sf, node, node.arguments[0]);
  }
  ts.forEachChild(node, (child) => visit(sf, child));
}

const targets = process.argv.length > 2 ? process.argv.slice(2).map((p) => join(src, p)) : [src];
for (const file of targets.flatMap(files)) {
  const sf = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.ES2020, true,
    file.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  visit(sf, sf);
}
for (const f of findings) console.log(JSON.stringify(f));
process.exit(findings.length ? 1 : 0);
