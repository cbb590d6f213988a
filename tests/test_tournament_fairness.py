"""Fair tournaments and ladders: a secret seed of 128 bits unless one is given (revealed only
in the report), a warning when a given seed meets outside entrants, and no outside entrant on
two seats of one table unless the runner allows it. Real `croupier serve` and `croupier bots`
processes; one deal of Dou Dizhu between fast levels."""

from __future__ import annotations

import json
import re
import sqlite3
import stat
import subprocess
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from bots import records
from bots.tournament import report
from bots.tournament.schedule import Seating, plan
from tests.bot_support import CROUPIER, REPO, Bots, Server, child_env

HEX32 = re.compile(r"[0-9a-f]{32}")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, list[Path]]]:
    """The server and a bot worker; yields the server and their log files."""
    tmp = tmp_path_factory.mktemp("fair-tourney")
    server = Server(tmp / "c.db", tmp / "server.log")
    bots = Bots(server.address, tmp / "bots.log", workers=1, poll=0.1)
    yield server, [tmp / "server.log", tmp / "bots.log", tmp / "c.db"]
    bots.stop()
    server.stop()


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=240,
                          env=child_env())


def _tournament(server: Server, out: Path, *extra: str,
                entrants: str = "random,heuristic") -> list[str]:
    return [CROUPIER, "tournament", "dou_dizhu", "--entrants", entrants, "--deals", "1",
            "--server", server.address, "--out", str(out), "--parallel", "3", "--no-progress",
            *extra]


def _meta_seed(path: Path) -> tuple[str, bool]:
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        meta = {k: json.loads(v) for k, v in db.execute("SELECT key, value FROM meta")}
    return meta["seed"], meta["seed_drawn"]


def _holding(text: str, paths: list[Path]) -> list[Path]:
    return [p for p in paths if p.is_file() and text.encode() in p.read_bytes()]


@pytest.mark.e2e
def test_without_seed_a_secret_one_is_drawn_and_shown_only_in_the_report(
    stack: tuple[Server, list[Path]], tmp_path: Path
) -> None:
    server, logs = stack
    out = tmp_path / "shard"
    # a shard plays its deals and writes no report: the state of any run before its report
    played = _run(_tournament(server, out, "--shard", "0/2"))
    assert played.returncode == 0, played.stderr
    seed, drawn = _meta_seed(out / "results-0-of-2.sqlite")
    assert drawn and HEX32.fullmatch(seed)  # 128 bits, fresh
    assert stat.S_IMODE((out / "results-0-of-2.sqlite").stat().st_mode) == 0o600
    record_files = sorted((out / "records").glob("*.json"))
    assert record_files and all(records.replay(records.load(p)) for p in record_files)
    # the run's folder keeps it in its result file (to resume); nothing else holds it: no
    # record, no log of the server or the bots, the server's store, the command's output
    everything = [*out.rglob("*"), *logs]
    assert _holding(seed, everything) == [out / "results-0-of-2.sqlite"]
    assert seed not in played.stdout + played.stderr
    again = _run(_tournament(server, out, "--shard", "0/2"))  # resumed: the same seed
    assert again.returncode == 0 and _meta_seed(out / "results-0-of-2.sqlite")[0] == seed
    # the report reveals it
    merged = _run([CROUPIER, "tournament-merge", str(out), "--out", str(out / "report")])
    assert merged.returncode == 0, merged.stderr
    rep = json.loads((out / "report" / "report.json").read_text())
    assert rep["seed"] == seed and rep["seed_drawn"]
    assert seed in merged.stdout and "drawn secretly" in merged.stdout
    # a second run draws another
    other = _run(_tournament(server, tmp_path / "other", "--shard", "0/2"))
    assert other.returncode == 0 and _meta_seed(
        tmp_path / "other" / "results-0-of-2.sqlite")[0] != seed


def test_a_given_seed_with_outside_entrants_warns_why(tmp_path: Path) -> None:
    # shard 1 of 2 of a one-deal run has nothing to play: the command only sets up and warns
    argv = [CROUPIER, "tournament", "dou_dizhu", "--entrants", "random,heuristic,ext:alice",
            "--deals", "1", "--shard", "1/2", "--out", str(tmp_path / "w"), "--no-progress"]
    warned = _run([*argv, "--seed", "public"])
    assert warned.returncode == 0, warned.stderr
    assert "warning: --seed with outside entrants (alice)" in warned.stderr
    assert "can compute every deal" in warned.stderr
    quiet = _run([*argv[:-3], "--out", str(tmp_path / "q"), "--no-progress"])
    assert quiet.returncode == 0 and "warning" not in quiet.stderr
    levels = _run([*(a.replace(",ext:alice", "") for a in argv[:-3]),
                   "--out", str(tmp_path / "l"), "--seed", "x"])
    assert levels.returncode == 0 and "warning" not in levels.stderr


def test_an_outside_entrant_never_holds_two_seats_unless_allowed(tmp_path: Path) -> None:
    argv = [CROUPIER, "tournament", "dou_dizhu", "--entrants", "ext:alice,random",
            "--deals", "1", "--no-progress"]
    refused = _run([*argv, "--out", str(tmp_path / "r")])
    assert refused.returncode == 2
    assert "2 entrants for 3 seats" in refused.stderr
    assert "--filler" in refused.stderr and "--allow-shared-seats" in refused.stderr
    assert not (tmp_path / "r").exists()  # refused before anything was made
    # the filler takes the seat left over: alice once per table, in every position
    filled = Seating("heuristic").arrangements(["alice", "random"], 3)
    assert len(filled) == 6 and all(sorted(s) == ["alice", "heuristic", "random"]
                                    for s in filled)
    assert Seating("random").arrangements(["alice", "random"], 3) == [
        ("alice", "random", "random"), ("random", "alice", "random"),
        ("random", "random", "alice")]
    shared = Seating(shared=True).arrangements(["alice", "random"], 3)
    assert any(s.count("alice") == 2 for s in shared)
    with pytest.raises(ValueError, match="no built-in level"):
        Seating("ext:bob").arrangements(["alice", "random"], 3)
    # built-in levels play each seat on its own view: they may share a table
    assert len(plan(["random", "heuristic"], 3, 1)) == 6
    meta = {"game": "dou_dizhu", "entrants": ["alice", "random"], "players": 3,
            "options": {}, "deals": 1, "seed": "s", "shared_seats": True}
    assert "a program holding two seats" in report.build(meta, [])["seating"]
    meta = {**meta, "shared_seats": False, "filler": "heuristic"}
    rep = report.build(meta, [])
    assert rep["entrants"] == ["alice", "random", "heuristic"]
    assert "built-in level heuristic (--filler)" in report.markdown(rep)


@pytest.mark.e2e
def test_a_filler_level_takes_the_seats_left_over(
    stack: tuple[Server, list[Path]], tmp_path: Path
) -> None:
    server, _ = stack
    out = tmp_path / "filled"
    done = _run(_tournament(server, out, "--filler", "heuristic", "--seed", "f",
                            entrants="random,easy"))
    assert done.returncode == 0, done.stderr
    files = sorted((out / "records").glob("*.json"))
    assert len(files) == 6
    for path in files:
        rec = records.load(path)
        assert sorted(s.entrant for s in rec.seats) == ["easy", "heuristic", "random"]
    assert "built-in level heuristic (--filler)" in (out / "report.md").read_text()


@pytest.mark.e2e
def test_a_ladder_draws_a_secret_seed_kept_out_of_the_server(
    stack: tuple[Server, list[Path]], tmp_path: Path
) -> None:
    server, logs = stack
    out = tmp_path / "ladder"
    done = _run([CROUPIER, "ladder", "dou_dizhu", "--entrants", "random,heuristic",
                 "--server", server.address, "--out", str(out), "--parallel", "3",
                 "--matches", "1", "--ladder", "fair"])
    assert done.returncode == 0, done.stderr
    state = json.loads((out / "ladder.json").read_text())
    seed = state["seed"]
    assert HEX32.fullmatch(seed) and stat.S_IMODE((out / "ladder.json").stat().st_mode) == 0o600
    # the match id sent to the server names the folder's public run, not the seed
    assert _holding(seed, [*out.rglob("*"), *logs]) == [out / "ladder.json"]
    assert seed not in done.stdout + done.stderr
    refused = _run([CROUPIER, "ladder", "dou_dizhu", "--entrants", "random,heuristic",
                    "--server", server.address, "--out", str(out), "--seed", "other"])
    assert refused.returncode == 2 and seed not in refused.stderr
