#!/usr/bin/env node
// A Croupier bot in Node.js for `croupier bot-bridge` (docs/bots.md), no npm packages:
//   croupier bot-bridge --entrant alice -- node examples/node_bot.js [--shared] [--first]
// It says hello, then answers every "decide" line with a random legal move (--first: the
// first one). One JSON object per line both ways; anything on stderr goes to the bridge's log.
"use strict";
const readline = require("readline");

const shared = process.argv.includes("--shared");
const first = process.argv.includes("--first");

function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

send({ hello: "croupier-bot/1", name: "node example", mode: shared ? "shared" : "per-seat" });

const lines = readline.createInterface({ input: process.stdin, terminal: false });
lines.on("line", (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch (e) {
    console.error("not JSON from the bridge: " + e.message);
    return;
  }
  if (message.type === "decide") {
    const moves = message.legal_moves;
    const pick = first ? 0 : Math.floor(Math.random() * moves.length);
    send({ id: message.id, move: moves[pick] });
  } else if (message.type === "seat") {
    console.error(`seat ${message.seat} of ${message.game} table ${message.table}`);
  } else if (message.type === "end") {
    console.error(`match over at table ${message.table}`);
  }
});
// the bridge closes stdin when this program should end
lines.on("close", () => process.exit(0));
