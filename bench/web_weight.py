"""What a phone on 3G waits for: a Doppelkopf table page of the web client, cold and warm.

`python -m bench.web_weight` starts a `croupier serve --web-listen` of this checkout (SQLite in
a temp dir) serving its web/dist; with `--before TREE`, a second one from TREE (a checkout of
an older commit with its own web/dist built), so both are measured in one run. Each creates a
Doppelkopf table with a fixed deal and four players joined through the API, and Chromium
(Playwright, Debian's) opens seat 0's table page under Chrome's network emulation (CDP
Network.emulateNetworkConditions; the default profile: 1.6 Mbit/s down, 750 kbit/s up, 150 ms
latency added to each request). Cold: a new browser context (empty cache); warm: the same page
opened again in that context.

Measured, from the navigation's start:
- bytes: every response's encoded size (headers and body, as on the wire), requests: their count,
  both less what the browser's cache answered (the table's stream included: its bytes until the
  end of the measure; a 304 counts as a request);
- interactive: the first hand card in the page (the code has run, the view arrived: a card can
  be clicked);
- first face: the first hand card whose face file has arrived (Resource Timing's responseEnd of
  the file its <use> names, or the card's appearance if later): before the split, the whole
  sprite; all faces: the same for every French card on the page.
Rounds alternate the trees; the table gives medians.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from croupier.v1 import croupier_pb2 as pb
from croupier.v1 import croupier_pb2_grpc as pb_grpc
from google.protobuf import struct_pb2

from tests.support import REPO, free_port, wait_serving
from tests.web_table_support import CHROMIUM, deck

# marks when the first hand card appears; the page's own clock (performance.now())
WATCH = """
window.__interactive = null;
new MutationObserver(() => {
  if (window.__interactive === null && document.querySelector('.hand-card'))
    window.__interactive = performance.now();
}).observe(document, {subtree: true, childList: true});
"""
# when every French card shown has its face file: [interactive, first face, all faces] or null
FACES = """() => {
  const t = window.__interactive;
  if (t === null) return null;
  const arrived = new Map(performance.getEntriesByType('resource')  // named with a fragment
    .map(e => [e.name.split('#')[0], e.responseEnd]));
  const end = (el) => {
    const href = el.getAttribute('href');
    return href && arrived.get(new URL(href.split('#')[0], location.href).href);
  };
  const hand = [...document.querySelectorAll('.hand-card use')].map(end);
  const all = [...document.querySelectorAll('use')].map(end);
  if (!hand.length || hand.some(x => x === undefined) || all.some(x => x === undefined)) return null;
  return [t, Math.max(t, Math.min(...hand)), Math.max(t, ...all)];
}"""


@dataclass
class Tree:
    """A checkout whose server and web/dist are measured."""

    name: str
    root: Path
    port: int = 0
    web_port: int = 0
    proc: subprocess.Popen[bytes] | None = None
    results: dict[str, list[dict[str, float]]] = field(default_factory=dict)

    def start(self, tmp: Path) -> None:
        self.port, self.web_port = free_port(), free_port()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(self.root), *os.environ.get("PYTHONPATH", "").split(os.pathsep)])}
        log = (tmp / f"{self.name}.log").open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "serve", "--listen", f"127.0.0.1:{self.port}",
             "--store", f"sqlite:{tmp / f'{self.name}.db'}",
             "--web-listen", f"127.0.0.1:{self.web_port}",
             "--web-root", str(self.root / "web" / "dist"), "--log-level", "warning"],
            stdout=log, stderr=log, cwd=self.root, env=env,
        )  # fmt: skip
        wait_serving(f"127.0.0.1:{self.port}", proc=self.proc)

    def table(self) -> tuple[str, str]:
        """A Doppelkopf table with a fixed deal, four players seated: (table id, seat 0's token)."""
        with grpc.insecure_channel(f"127.0.0.1:{self.port}") as channel:
            stub = pb_grpc.CroupierStub(channel)
            options = struct_pb2.Struct()
            options.update({"deck": deck("doppelkopf", 7)})
            table = stub.CreateTable(pb.CreateTableRequest(
                game="doppelkopf", players=4, options=options,
                seats=[pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN)] * 4))
            tokens = [stub.JoinTable(pb.JoinTableRequest(table_id=table.table_id, name=n)).token
                      for n in ("ann", "ben", "cat", "dan")]
        return table.table_id, tokens[0]

    def stop(self) -> None:
        if self.proc:
            self.proc.terminate()
            self.proc.wait(15)


def measure(context: Any, url: str, table_id: str, token: str, profile: dict[str, Any],
            shot: Path | None) -> dict[str, float]:
    """One load of the table page in `context`, under `profile`: bytes, requests, timings."""
    page = context.new_page()
    page.add_init_script(WATCH)
    page.goto(f"{url}/bench-no-such-page")  # the origin, for sessionStorage, without the app
    page.evaluate("([t, tok]) => sessionStorage.setItem(`croupier.seat.${t}`,"
                  " JSON.stringify({seat: 0, token: tok}))", [table_id, token])
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.emulateNetworkConditions", profile)
    sizes: dict[str, float] = {}
    cached: set[str] = set()
    cdp.on("Network.requestWillBeSent", lambda e: sizes.setdefault(e["requestId"], 0))
    cdp.on("Network.requestServedFromCache", lambda e: cached.add(e["requestId"]))
    cdp.on("Network.responseReceived", lambda e: cached.add(e["requestId"])
           if e["response"].get("fromDiskCache") else None)
    cdp.on("Network.dataReceived", lambda e: sizes.__setitem__(
        e["requestId"], sizes.get(e["requestId"], 0) + e["encodedDataLength"]))
    cdp.on("Network.loadingFinished", lambda e: sizes.__setitem__(
        e["requestId"], e["encodedDataLength"]))
    page.goto(f"{url}/#/table/{table_id}", wait_until="commit")
    deadline = time.monotonic() + 120
    timings = None
    while timings is None and time.monotonic() < deadline:
        page.wait_for_timeout(20)
        timings = page.evaluate(FACES)
    if timings is None:
        raise RuntimeError("the table page never showed its cards")
    if shot:
        page.screenshot(path=str(shot))
    page.wait_for_timeout(200)
    sent = [k for k in sizes if k not in cached]
    out = {"bytes": sum(sizes[k] for k in sent), "requests": len(sent), "interactive": timings[0],
           "first face": timings[1], "all faces": timings[2]}
    page.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="an older checkout with web/dist built")
    parser.add_argument("--before-name", default="before", help="its name in the table")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--down-kbps", type=float, default=1600)
    parser.add_argument("--up-kbps", type=float, default=750)
    parser.add_argument("--latency-ms", type=float, default=150)
    parser.add_argument("--shots", type=Path, default=REPO / "test-output" / "bench",
                        help="a screenshot of each tree's table, cold, to look at")
    args = parser.parse_args(argv)
    if not Path(CHROMIUM).exists() or not (REPO / "web" / "dist" / "index.html").exists():
        print(f"web_weight: skipped (needs Chromium at {CHROMIUM} and web/dist: make web)")
        return 0
    from playwright.sync_api import sync_playwright

    profile = {"offline": False, "latency": args.latency_ms,
               "downloadThroughput": args.down_kbps * 1000 / 8,
               "uploadThroughput": args.up_kbps * 1000 / 8}
    before = args.before_name
    trees = ([Tree(before, args.before.resolve())] if args.before else []) + [Tree("after", REPO)]
    tmp = Path(tempfile.mkdtemp(prefix="croupier-web-weight-"))
    args.shots.mkdir(parents=True, exist_ok=True)
    try:
        for tree in trees:
            tree.start(tmp)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                        args=["--no-sandbox", "--disable-gpu"])
            for r in range(args.rounds):
                for tree in trees:
                    table_id, token = tree.table()
                    context = browser.new_context(
                        viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
                    url = f"http://127.0.0.1:{tree.web_port}"
                    shot = args.shots / f"web-weight-{tree.name}.png" if r == 0 else None
                    for kind in ("cold", "warm"):
                        got = measure(context, url, table_id, token, profile, shot)
                        shot = None
                        tree.results.setdefault(kind, []).append(got)
                    context.close()
            browser.close()
    finally:
        for tree in trees:
            tree.stop()
    print(f"3G profile: {args.down_kbps:g} kbit/s down, {args.up_kbps:g} kbit/s up, "
          f"{args.latency_ms:g} ms per request; {args.rounds} rounds, medians")
    measures = ("bytes", "requests", "interactive", "first face", "all faces")
    print("| load | tree | kB | requests | interactive ms | first face ms | all faces ms |")
    print("|---|---|---:|---:|---:|---:|---:|")
    med: dict[tuple[str, str, str], float] = {}
    for kind in ("cold", "warm"):
        for tree in trees:
            row = [statistics.median(x[m] for x in tree.results[kind]) for m in measures]
            for m, v in zip(measures, row, strict=True):
                med[(kind, tree.name, m)] = v
            print(f"| {kind} | {tree.name} | {row[0] / 1000:,.1f} | {row[1]:.0f} | {row[2]:,.0f} "
                  f"| {row[3]:,.0f} | {row[4]:,.0f} |")
    if args.before:
        for kind in ("cold", "warm"):
            ratios = ", ".join(
                f"{m} {med[(kind, 'after', m)] / med[(kind, before, m)]:.2f}x"
                for m in measures if med[(kind, before, m)])
            print(f"{kind}, after / {before}: {ratios}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
