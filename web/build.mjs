// The web client's build: `node build.mjs` for production, `node build.mjs --dev` for work on it.
//
// Everything but index.html goes to dist/assets/ under a name that carries a hash of its
// content, so that the server can let browsers keep it for a year (a changed file is a new
// name); index.html, rewritten to those names, is the one file browsers must ask for again.
// Text files get .gz and .br copies beside them (the server picks one by Accept-Encoding).
// Production has no source maps; --dev keeps them (inline: the server never serves .map files)
// and leaves the code unminified. The French card faces come split per face (build-cards.mjs):
// a table loads the faces it shows, not the whole deck.
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, extname, join, relative } from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import * as esbuild from "esbuild";
import { LICENCE, splitFaces } from "./build-cards.mjs";

const dev = process.argv.includes("--dev");
const layoutArg = process.argv.find((a) => a.startsWith("--cards="));
const layout = layoutArg ? layoutArg.slice("--cards=".length) : "files";
const DIST = "dist";
const ASSETS = join(DIST, "assets");
const COMPRESSIBLE = new Set([".js", ".css", ".svg", ".html", ".json", ".txt"]);

function hashed(name, data) {
  const hash = createHash("sha256").update(data).digest("hex").slice(0, 10);
  return `${basename(name, extname(name))}-${hash}${extname(name)}`;
}

/** Writes `data` into assets/ under its hashed name; returns the URL the page uses. */
function asset(dir, name, data) {
  mkdirSync(join(ASSETS, dir), { recursive: true });
  const file = join(ASSETS, dir, hashed(name, data));
  writeFileSync(file, data);
  return relative(DIST, file);
}

rmSync(DIST, { recursive: true, force: true });
mkdirSync(ASSETS, { recursive: true });

// card faces first: the code is built with their file names in it
const cardFiles = {};
for (const [name, { faces, svg }] of splitFaces(layout)) {
  const url = asset("cards", `${name}.svg`, svg);
  for (const face of faces) cardFiles[face] = url;
}
mkdirSync(join(DIST, "licences"), { recursive: true });
copyFileSync(LICENCE, join(DIST, "licences", "svg-cards.txt"));

const result = await esbuild.build({
  entryPoints: [{ in: "src/main.tsx", out: "app" }, { in: "src/style.css", out: "style" }],
  outdir: ASSETS,
  entryNames: "[name]-[hash]",
  chunkNames: "chunk-[hash]",
  assetNames: "[name]-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  target: "es2020",
  jsx: "automatic",
  jsxImportSource: "preact",
  minify: !dev,
  sourcemap: dev ? "inline" : false,
  define: { __CARD_FILES__: JSON.stringify(cardFiles) },
  metafile: true,
  logLevel: "warning",
});
const entries = {};
for (const [file, out] of Object.entries(result.metafile.outputs)) {
  if (out.entryPoint) entries[out.entryPoint] = relative(DIST, file);
}

// index.html: every local reference rewritten to its hashed file, or the build fails
let html = readFileSync("src/index.html", "utf8");
const favicon = asset("", "favicon.svg", readFileSync("src/favicon.svg"));
const refs = { "app.js": entries["src/main.tsx"], "style.css": entries["src/style.css"], "favicon.svg": favicon };
for (const [name, url] of Object.entries(refs)) {
  const attr = new RegExp(`(href|src)="${name.replace(".", "\\.")}"`);
  if (!attr.test(html)) throw new Error(`src/index.html does not name ${name}`);
  html = html.replace(attr, `$1="${url}"`);
}
writeFileSync(join(DIST, "index.html"), html);

// .gz and .br beside every text file they make smaller
function* files(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) yield* files(join(dir, e.name));
    else yield join(dir, e.name);
  }
}
let raw = 0, br = 0;
for (const file of [...files(DIST)]) {
  if (!COMPRESSIBLE.has(extname(file))) continue;
  const data = readFileSync(file);
  const gz = gzipSync(data, { level: 9 });
  const b = brotliCompressSync(data, { params: {
    [constants.BROTLI_PARAM_QUALITY]: dev ? 5 : 11,
    [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
    [constants.BROTLI_PARAM_SIZE_HINT]: data.length,
  } });
  if (gz.length < data.length) writeFileSync(`${file}.gz`, gz);
  if (b.length < data.length) writeFileSync(`${file}.br`, b);
  raw += data.length;
  br += Math.min(b.length, data.length);
}
const size = (f) => statSync(join(DIST, f)).size;
console.log(`dist: ${entries["src/main.tsx"]} ${size(entries["src/main.tsx"])} B, ` +
  `${Object.keys(cardFiles).length} card faces in ${new Set(Object.values(cardFiles)).size} files; ` +
  `text ${raw} B, ${br} B as brotli${dev ? " (dev build: inline source maps)" : ""}`);
