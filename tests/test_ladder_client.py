"""`croupier ladder` end to end: real `croupier serve` and `croupier bots` processes, the
command run, killed mid-match and run again; the server's standings show every match once."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from croupier.v1 import croupier_pb2 as pb

from bots.ladder import draw, parse_entrants, standings_text
from tests.bot_support import CROUPIER, REPO, Bots, Server, child_env, stub_for, wait_until

pytestmark = pytest.mark.e2e
SEATINGS = 6  # random and heuristic on three seats: each in one or two of them


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("ladder")
    server = Server(tmp / "c.db", tmp / "server.log")
    bots = Bots(server.address, tmp / "bots.log", workers=1, poll=0.1)
    yield server
    bots.stop()
    server.stop()


def ladder(server: Server, out: Path, *extra: str) -> list[str]:
    return [CROUPIER, "ladder", "dou_dizhu", "--entrants", "random,heuristic",
            "--server", server.address, "--out", str(out), "--parallel", "3", *extra]


def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=240,
                          env=child_env())


def state(out: Path) -> dict[str, Any]:
    path = out / "ladder.json"
    return json.loads(path.read_text()) if path.exists() else {}


def tables_begun(out: Path, number: int) -> int:
    """Tables with an id in the results file of match `number`."""
    path = out / "matches" / f"{number:06d}" / "results.sqlite"
    if not path.exists():
        return 0
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        try:
            return int(db.execute("SELECT COUNT(*) FROM matches WHERE table_id != ''")
                       .fetchone()[0])
        except sqlite3.OperationalError:
            return 0


def standings(server: Server, name: str) -> dict[str, int]:
    channel, stub = stub_for(server.address)
    with channel:
        reply = stub.ListRatings(pb.ListRatingsRequest(ladder=name, game="dou_dizhu"),
                                 timeout=10)
    return {r.entrant: r.matches for r in reply.ratings}


def ladder_tables(server: Server, name: str, since: float) -> set[str]:
    channel, stub = stub_for(server.address)
    with channel:
        tables = stub.ListTables(pb.ListTablesRequest(limit=500, game="dou_dizhu"),
                                 timeout=10).tables
    return {t.table_id for t in tables
            if t.created_at >= since and "ladder" in t.options and t.options["ladder"] == name}


def test_ladder_plays_rates_and_resumes_after_a_kill(stack: Server, tmp_path: Path) -> None:
    t0 = time.time()
    out = tmp_path / "run"
    first = run(ladder(stack, out, "--ladder", "club", "--matches", "2"))
    assert first.returncode == 0, first.stderr
    assert "heuristic" in first.stdout and "matches" in first.stdout  # the standings, printed
    assert state(out)["next_deal"] == 2 and state(out)["begun"] is None
    assert standings(stack, "club") == {"random": 2, "heuristic": 2}

    # killed while its next match is being played
    proc = subprocess.Popen(ladder(stack, out, "--ladder", "club"), cwd=REPO, env=child_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: tables_begun(out, 2) >= 1 or proc.poll() is not None, timeout=120,
                   what="the third match's first table")
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    begun = state(out)["begun"]
    assert begun is not None and begun["deal"] == 2, "the kill came too late to test resuming"

    again = run(ladder(stack, out, "--ladder", "club", "--matches", "2"))
    assert again.returncode == 0, again.stderr
    assert "finishing deal 2" in again.stdout
    s = state(out)
    assert s["next_deal"] == 4 and s["rated"] == 4 and s["begun"] is None
    assert standings(stack, "club") == {"random": 4, "heuristic": 4}
    # four deals, each played once in every seating: no table too many, none replayed
    assert len(ladder_tables(stack, "club", t0)) == 4 * SEATINGS
    records = sorted(p.name for p in (out / "matches").glob("*/records/*.json"))
    assert len(records) == 4 * SEATINGS
    assert {name.split("-")[1] for name in records} == {"00000", "00001", "00002", "00003"}


def test_ladder_stops_cleanly_and_refuses_bad_settings(stack: Server, tmp_path: Path) -> None:
    out = tmp_path / "stop"
    proc = subprocess.Popen(ladder(stack, out, "--ladder", "stop"), cwd=REPO, env=child_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: tables_begun(out, 0) >= 1 or proc.poll() is not None, timeout=120,
                   what="the first match's first table")
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0 and "stopped" in err and "Traceback" not in err, err
    # the folder keeps its ladder and seed; entrants and timers may change between runs
    other = run(ladder(stack, out, "--ladder", "another"))
    assert other.returncode == 2 and "other settings" in other.stderr
    for extra in (["--entrants", "random"], ["--entrants", "random,Bad"], ["--matches", "0"],
                  ["--option", "deck=\"x\""], ["--match-seconds", "5"], ["--ladder", "A"]):
        bad = run([*ladder(stack, tmp_path / "bad"), *extra])
        assert bad.returncode == 2 and "croupier ladder:" in bad.stderr, (extra, bad.stderr)
    done = run(ladder(stack, out, "--ladder", "stop", "--matches", "1"))
    assert done.returncode == 0 and "finishing deal 0" in done.stdout, done.stderr
    assert standings(stack, "stop") == {"random": 1, "heuristic": 1}


def test_entrants_draw_and_standings_text() -> None:
    import random

    assert parse_entrants("hard, ext:alice,bob") == ["hard", "alice", "bob"]
    rng = random.Random(1)
    everyone = ["a", "b", "c", "d", "e"]
    assert draw(everyone[:3], 3, {}, rng) == ["a", "b", "c"]
    # the least played go first: after a match of a, b, c, the next has d and e
    chosen = draw(everyone, 3, {"a": 1, "b": 1, "c": 1}, rng)
    assert {"d", "e"} <= set(chosen) and len(chosen) == 3
    assert "no rated matches" in standings_text([])
    rows = [pb.Rating(entrant="x", mu=30, sigma=5, ordinal=15, matches=3),
            pb.Rating(entrant="y", mu=30, sigma=5, ordinal=15, matches=3),
            pb.Rating(entrant="z", mu=20, sigma=5, ordinal=5, matches=3)]
    lines = standings_text(rows).splitlines()
    assert [line.split()[0] for line in lines[1:]] == ["1", "1", "3"]  # ties share a rank
    assert "30.0 ± 5.0" in lines[1] and "15.0" in lines[1]
