// The French card faces for the build: svg-cards ships one sprite of every face (963 kB), and a
// table needs only the faces it shows. Each face (and the back) becomes a file of its own that
// holds that face and only the shapes it uses, optimised by svgo; the ids stay those of the
// sprite, so a card is drawn with <use href="<file>#heart_queen">. `sprites` groups faces into
// a few files instead (kept to compare the two: see BENCHMARKS.md, "Page weight").
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { optimize } from "svgo";

const require = createRequire(import.meta.url);
export const SOURCE = require.resolve("svg-cards/svg-cards.svg");
export const LICENCE = require.resolve("svg-cards/LICENSE");
const VERSION = require("svg-cards/package.json").version;

const SUITS = ["club", "diamond", "heart", "spade"];
const RANKS = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "jack", "queen", "king"];
/** Every face the client can ask for: 52 cards, two jokers, the back. */
export const FACES = [
  ...SUITS.flatMap((s) => RANKS.map((r) => `${s}_${r}`)),
  "joker_black", "joker_red", "back",
];
/** The groups of the `sprites` layout: what Doppelkopf deals, the rest of the 52, jokers. */
const HIGH = new Set(["9", "10", "jack", "queen", "king", "1"]);
export function spriteOf(face) {
  if (face.startsWith("joker")) return "jokers";
  if (face === "back") return "high";
  return HIGH.has(face.split("_")[1]) ? "high" : "low";
}

const NOTICE =
  `SVG-cards ${VERSION}: Copyright (C) 2005 David Bellot, (C) 2016, 2017 Huub de Beer; ` +
  "LGPL-2.1-or-later (licences/svg-cards.txt). Split per face and optimised by Croupier's " +
  "web/build-cards.mjs.";

// svgo's defaults, less what would break a face fetched by id from another document: ids kept
// as they are (the page names them), nothing in <defs> dropped as unused (the page uses it).
// Transforms stay as drawn (svgo's rewriting of them moved the jack of diamonds' sash); path
// coordinates keep one decimal: the figures are drawn at three times their size on the card,
// and every face rendered at four times a phone's card showed no difference to the eye from the
// package's own (edges moved by a fraction of a pixel), at two thirds of the bytes.
const SVGO = {
  multipass: true,
  plugins: [
    { name: "preset-default", params: { overrides: {
      cleanupIds: false, removeUselessDefs: false, removeHiddenElems: false, removeComments: false,
      convertTransform: false, convertPathData: { floatPrecision: 1 },
    } } },
  ],
};

/** The sprite parsed once: svgo hands its syntax tree to a plugin, which keeps it. */
function parse(text) {
  let root;
  optimize(text, { plugins: [{ name: "keep-tree", fn: (tree) => { root = tree; return {}; } }] });
  return root;
}

function* elements(node) {
  for (const child of node.children ?? []) {
    if (child.type === "element") {
      yield child;
      yield* elements(child);
    }
  }
}

/** The ids an element refers to: href="#x", xlink:href="#x", url(#x). */
function references(el) {
  const out = new Set();
  for (const e of [el, ...elements(el)]) {
    for (const [name, value] of Object.entries(e.attributes)) {
      if ((name === "href" || name === "xlink:href") && value.startsWith("#")) out.add(value.slice(1));
      for (const m of value.matchAll(/url\(\s*#([^)\s]+)\s*\)/g)) out.add(m[1]);
    }
  }
  return out;
}

/** An element as text, less the ids nothing refers to (svgo must keep every id: see SVGO). */
function serialise(el, keep) {
  const attrs = Object.entries(el.attributes)
    .filter(([k, v]) => k !== "id" || keep.has(v))
    .map(([k, v]) => ` ${k}="${escape(v)}"`).join("");
  const inner = (el.children ?? []).map((c) =>
    c.type === "element" ? serialise(c, keep) : c.type === "text" ? escape(c.value) : "").join("");
  return `<${el.name}${attrs}>${inner}</${el.name}>`;
}

function escape(s) {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** The faces as SVG documents: `layout` "files" gives one per face, "sprites" one per group. */
export function splitFaces(layout = "files") {
  const tree = parse(readFileSync(SOURCE, "utf8"));
  const svg = tree.children.find((c) => c.type === "element" && c.name === "svg");
  const defs = svg.children.find((c) => c.type === "element" && c.name === "defs");
  const tops = defs.children.filter((c) => c.type === "element");
  // any id, even one nested deep, to the top-level shape that holds it
  const owner = new Map();
  for (const top of tops) {
    for (const e of [top, ...elements(top)]) if (e.attributes.id) owner.set(e.attributes.id, top);
  }
  const closure = (ids) => {
    const seen = new Set();
    const todo = [...ids].map((id) => owner.get(id));
    while (todo.length) {
      const top = todo.pop();
      if (!top || seen.has(top)) continue;
      seen.add(top);
      for (const ref of references(top)) todo.push(owner.get(ref));
    }
    return tops.filter((t) => seen.has(t)); // in the sprite's order: shapes before their users
  };
  for (const face of FACES) {
    if (!owner.has(face)) throw new Error(`svg-cards has no ${face}: was the package changed?`);
  }
  const groups = new Map();
  for (const face of FACES) {
    const name = layout === "files" ? face : spriteOf(face);
    groups.set(name, [...(groups.get(name) ?? []), face]);
  }
  const head = Object.entries(svg.attributes).map(([k, v]) => ` ${k}="${escape(v)}"`).join("");
  const out = new Map();
  for (const [name, faces] of groups) {
    const parts = closure(faces);
    const keep = new Set([...faces, ...parts.flatMap((p) => [...references(p)])]);
    const body = parts.map((p) => serialise(p, keep)).join("");
    const text = `<svg${head}><!-- ${NOTICE} --><defs>${body}</defs></svg>`;
    out.set(name, { faces, svg: optimize(text, SVGO).data });
  }
  return out;
}
