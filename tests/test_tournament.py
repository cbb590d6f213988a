"""Tournaments: duplicate deals for every engine, ratings, and `croupier tournament` end to end
against a real server and real bot worker processes (random and heuristic levels: fast).
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest
from croupier.v1 import croupier_pb2 as pb

from bots import records
from bots.arena import seatings
from bots.tournament import ratings
from bots.tournament.results import Outcome
from bots.tournament.schedule import deal_options, parse_shard, plan
from engines.registry import GAMES, get_game
from tests.bot_support import REPO, Bots, Server, child_env, stub_for, wait_until

CROUPIER = [sys.executable, "-m", "service.cli"]
PLAYERS = {
    "dou_dizhu": (3,), "doppelkopf": (4,), "dobro": (2, 4), "dos": (2, 4), "sobe_e_desce": (4,)
}


# --- schedule ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(GAMES))
def test_a_deal_gives_every_table_the_same_cards(name: str) -> None:
    """Two tables of one deal, with different secret seeds, deal the same hands: what every
    seat sees at the start is identical."""
    game = get_game(name)
    for players in PLAYERS[name]:
        opts = deal_options(name, players, {}, "t", 3)
        a, b = game.new_game(players, opts, "seed-a"), game.new_game(players, opts, "seed-b")
        for seat in range(players):
            assert game.view(a, seat) == game.view(b, seat), (name, players, seat)
        other = game.new_game(players, deal_options(name, players, {}, "t", 4), "seed-a")
        assert any(game.view(a, s) != game.view(other, s) for s in range(players))


def test_shards_split_whole_deals() -> None:
    full = plan(["a", "b", "c"], 3, 5)
    shards = [plan(["a", "b", "c"], 3, 5, (i, 2)) for i in range(2)]
    assert sorted(m.key for s in shards for m in s) == sorted(m.key for m in full)
    assert {m.deal for m in shards[0]}.isdisjoint({m.deal for m in shards[1]})
    assert len(full) == 5 * len(seatings(["a", "b", "c"], 3))
    assert parse_shard("1/3") == (1, 3)
    for bad in ("3/3", "x", "1/0", "-1/2", "1"):
        with pytest.raises(ValueError, match="shard"):
            parse_shard(bad)


# --- ratings ----------------------------------------------------------------------------

def test_bradley_terry_orders_and_spaces_ratings() -> None:
    # a beats b 3:1, b beats c 3:1: equal steps, a on top
    wins = np.array([[0, 30, 45], [10, 0, 30], [5, 10, 0]], dtype=float)
    r = ratings.bradley_terry(wins, prior=0)
    assert r[0] > r[1] > r[2] and abs(r.sum()) < 1e-6
    assert abs((r[0] - r[1]) - 400 * np.log10(3)) < 5


def _outcomes(deals: int, edge: int) -> list[Outcome]:
    out = []
    for d in range(deals):
        for s in seatings(["strong", "weak"], 2):
            base = [d % 3 - 1, 1 - d % 3]  # the luck of the cards, the same for both seatings
            scores = tuple(base[i] + (edge if who == "strong" else -edge) for i, who in enumerate(s))
            winners = tuple(i for i, v in enumerate(scores) if v == max(scores))
            out.append(Outcome(d, s, scores, winners))
    return out


def test_ratings_intervals_and_significance() -> None:
    outcomes = _outcomes(30, 2)
    fitted = ratings.fit(outcomes, ["strong", "weak"])
    assert [r["entrant"] for r in fitted] == ["strong", "weak"]
    lo, hi = fitted[0]["rating_ci95"]
    assert lo <= fitted[0]["rating"] <= hi
    pair = ratings.pairwise(outcomes, ["strong", "weak"])[0]
    assert pair["mean_diff"] == 4 and pair["significant"]
    summary = {s["bot"]: s for s in ratings.per_entrant(outcomes, 2)}
    assert summary["strong"]["win_rate"] == 1.0 and summary["weak"]["mean_points"] < 0
    # no edge: the duplicate format cancels the luck exactly
    even = ratings.pairwise(_outcomes(30, 0), ["strong", "weak"])[0]
    assert even["mean_diff"] == 0 and not even["significant"]
    # one deal: a rating, but no interval to resample
    assert ratings.fit(_outcomes(1, 1), ["strong", "weak"])[0]["rating_ci95"] == [None, None]


# --- end to end ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("tourney")
    server = Server(tmp / "c.db", tmp / "server.log")
    bots = Bots(server.address, tmp / "bots.log", workers=1, poll=0.1)
    yield server
    bots.stop()
    server.stop()


def _tournament(server: Server, out: Path, *extra: str, deals: int = 2,
                entrants: str = "random,heuristic") -> list[str]:
    return [*CROUPIER, "tournament", "dou_dizhu", "--entrants", entrants, "--deals", str(deals),
            "--server", server.address, "--out", str(out), "--parallel", "3", "--no-progress",
            *extra]


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=240,
                          env=child_env())


def _finished_rows(path: Path) -> list[tuple[int, str, str]]:
    if not path.exists():
        return []
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        try:
            return db.execute("SELECT deal, seating, table_id FROM matches "
                              "WHERE scores IS NOT NULL").fetchall()
        except sqlite3.OperationalError:
            return []  # not created yet


def test_tournament_through_the_service(stack: Server, tmp_path: Path) -> None:
    out = tmp_path / "t"
    done = _run(_tournament(stack, out))
    assert done.returncode == 0, done.stderr
    per_deal = len(seatings(["random", "heuristic"], 3))
    rep = json.loads((out / "report.json").read_text())
    assert rep["deals_complete"] == 2 and rep["tables"] == 2 * per_deal
    assert {r["entrant"] for r in rep["ratings"]} == {"random", "heuristic"}
    assert (out / "ratings.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| entrant |" in (out / "report.md").read_text()
    assert (out / "report.csv").read_text().startswith("entrant,rating")
    # every table's record is beside the report and replays to the stored result
    files = sorted((out / "records").glob("*.json"))
    assert len(files) == 2 * per_deal
    rows = {t: (d, s) for d, s, t in _finished_rows(out / "results.sqlite")}
    for path in files:
        rec = records.load(path)
        assert records.replay(rec) == rec.result
        assert rec.table_id in rows
        assert [s.bot_level for s in rec.seats] == rows[rec.table_id][1].split(",")
    # the tables were real ones on the server, created with bot seats of those levels
    channel, stub = stub_for(stack.address)
    with channel:
        for table_id in list(rows)[:3]:
            view = stub.GetView(pb.GetViewRequest(table_id=table_id), timeout=10)
            assert view.table.status == pb.TABLE_STATUS_FINISHED
            assert all(s.kind == pb.SEAT_KIND_BOT and s.is_bot for s in view.table.seats)
    # run again: nothing left to play, the same report
    again = _run(_tournament(stack, out))
    assert again.returncode == 0, again.stderr
    assert json.loads((out / "report.json").read_text())["tables"] == 2 * per_deal


@pytest.mark.parametrize(("game", "extra"), [
    ("dobro", ["--players", "2"]),
    ("doppelkopf", ["--option", "bistro=true"]),
    ("dos", ["--players", "2"]),
    ("sobe_e_desce", ["--option", "start_score=3"]),
])
def test_every_game_plays_duplicate_deals_through_the_service(
    stack: Server, tmp_path: Path, game: str, extra: list[str]
) -> None:
    out = tmp_path / game
    argv = _tournament(stack, out, *extra, deals=1)
    argv[argv.index("dou_dizhu")] = game
    done = _run(argv)
    assert done.returncode == 0, done.stderr
    files = sorted((out / "records").glob("*.json"))
    players = records.load(files[0]).players
    assert len(files) == len(seatings(["random", "heuristic"], players))
    engine = get_game(game)
    first_views = set()
    for path in files:
        rec = records.load(path)
        assert records.replay(rec) == rec.result
        start = engine.decode(rec.initial_state)
        first_views.add(tuple(engine.view(start, s).SerializeToString() for s in range(players)))
    assert len(first_views) == 1, "every seating of the deal got the same cards"


def test_killed_tournament_resumes_without_playing_a_deal_twice(
    stack: Server, tmp_path: Path
) -> None:
    t0 = time.time()
    out = tmp_path / "k"
    deals = 4
    planned = deals * len(seatings(["random", "heuristic"], 3))
    results = out / "results.sqlite"
    proc = subprocess.Popen(_tournament(stack, out, deals=deals), cwd=REPO, env=child_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: len(_finished_rows(results)) >= 3 or proc.poll() is not None,
                   timeout=120, what="three finished tables")
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    before = _finished_rows(results)
    assert 3 <= len(before) < planned, "the kill came too late to test resuming"
    done = _run(_tournament(stack, out, deals=deals))
    assert done.returncode == 0, done.stderr
    after = _finished_rows(results)
    assert len(after) == planned
    assert set(before) <= set(after)  # results of the first run were kept, not replayed
    assert len({t for _, _, t in after}) == planned
    # the server holds exactly one table per match of this tournament: none was played twice
    channel, stub = stub_for(stack.address)
    with channel:
        tables = stub.ListTables(pb.ListTablesRequest(limit=500), timeout=10).tables
    ours = {t for _, _, t in after}
    created_since = {t.table_id for t in tables if t.created_at >= t0}
    assert created_since == ours, "a table was created that no result accounts for"
    assert json.loads((out / "report.json").read_text())["deals_complete"] == deals


def test_a_table_created_just_before_a_kill_is_adopted(stack: Server, tmp_path: Path) -> None:
    """Killed after CreateTable but before its id was stored: the restart finds the table on
    the server by its label (the run's public name and the deal) and seats instead of playing
    the deal again."""
    from bots.tournament.play import Runner
    from bots.tournament.results import ResultFile
    from bots.tournament.schedule import Match

    t0 = time.time()
    out = tmp_path / "adopt"
    out.mkdir()
    meta = {"game": "dou_dizhu", "entrants": ["random", "heuristic"], "players": 3,
            "options": {}, "deals": 1, "seed": "croupier", "run": "adopt"}
    results = ResultFile(out / "results.sqlite")
    results.claim_meta({**meta, "shard": [0, 1]})
    match = Match(0, ("heuristic", "random", "random"))
    runner = Runner(None, results, meta, out)  # type: ignore[arg-type]
    results.started(match, "")  # what the killed run had written before CreateTable
    channel, stub = stub_for(stack.address)
    with channel:
        orphan = stub.CreateTable(runner._request(match), timeout=10).table_id
    results.close()
    done = _run(_tournament(stack, out, deals=1))
    assert done.returncode == 0, done.stderr
    rows = {s: t for _, s, t in _finished_rows(out / "results.sqlite")}
    assert rows[",".join(match.seating)] == orphan
    channel, stub = stub_for(stack.address)
    with channel:
        tables = stub.ListTables(pb.ListTablesRequest(limit=500), timeout=10).tables
    assert {t.table_id for t in tables if t.created_at >= t0} == set(rows.values())


def test_shards_merge_into_one_report(stack: Server, tmp_path: Path) -> None:
    for i in range(2):
        done = _run(_tournament(stack, tmp_path / f"shard{i}", "--shard", f"{i}/2"))
        assert done.returncode == 0, done.stderr
        assert (tmp_path / f"shard{i}" / f"results-{i}-of-2.sqlite").exists()
    merged = _run([*CROUPIER, "tournament-merge", str(tmp_path / "shard0"),
                   str(tmp_path / "shard1"), "--out", str(tmp_path / "merged")])
    assert merged.returncode == 0, merged.stderr
    rep = json.loads((tmp_path / "merged" / "report.json").read_text())
    assert rep["deals_complete"] == 2


def test_bad_input_is_refused_with_a_message(stack: Server, tmp_path: Path) -> None:
    cases = [
        (["--entrants", "random,Grand Master"], "bad entrant name"),
        (["--entrants", "random"], "at least two"),
        (["--option", "deals=0"], "refused"),
        (["--shard", "2/2"], "shard"),
        (["--option", "deck=3s"], "deck"),
    ]
    for extra, says in cases:
        argv = _tournament(stack, tmp_path / "bad") + extra
        done = _run(argv)
        assert done.returncode == 2, (extra, done.stderr)
        assert says in done.stderr, (extra, done.stderr)
    # resuming a folder with other settings would mix two tournaments
    out = tmp_path / "one"
    assert _run(_tournament(stack, out, deals=1)).returncode == 0
    other = _run(_tournament(stack, out, deals=1, entrants="random,easy"))
    assert other.returncode == 2 and "other settings" in other.stderr
    merged = _run([*CROUPIER, "tournament-merge", str(tmp_path / "nothing"), "--out",
                   str(tmp_path / "m")])
    assert merged.returncode == 2 and "no such file" in merged.stderr


def test_the_tournament_is_a_client_only() -> None:
    code = ("import sys, bots.tournament.cli; "
            "sys.exit(any(m == 'service' or m.startswith('service.') for m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], cwd=REPO).returncode == 0


# --- progress -----------------------------------------------------------------------------

def test_progress_bar_counts_pieces_with_labelled_times() -> None:
    """The bar of `croupier tournament` and `croupier arena`: what it counts in words, the
    time elapsed and an ETA as soon as the first table (not the first whole deal) is done."""
    import io

    from rich.console import Console

    from bots.progress import progress_bar

    now = [100.0]
    bar = progress_bar("tables", Console(file=io.StringIO()), clock=lambda: now[0])
    task = bar.add_task("dou_dizhu a,b", total=12, completed=2, before=2, detail="· 0 moves")

    def shown() -> str:
        out = Console(file=io.StringIO(), width=200)
        out.print(bar.make_tasks_table(bar.tasks))
        return out.file.getvalue()  # type: ignore[attr-defined]

    bar.start_task(task)
    assert "2/12 tables · 0 moves elapsed 0:00:00 ETA -:--:--" in shown()
    now[0] += 30
    bar.update(task, advance=1, detail="· 57 moves")
    # 1 table in 30 s (the 2 of an earlier run do not count), 9 to go
    assert "3/12 tables · 57 moves elapsed 0:00:30 ETA 0:04:30" in shown()


def test_tournament_progress_counts_tables_and_moves(stack: Server, tmp_path: Path) -> None:
    argv = [a for a in _tournament(stack, tmp_path / "p", deals=1) if a != "--no-progress"]
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=240,
                          env=child_env(COLUMNS="200"))
    assert done.returncode == 0, done.stderr
    tables = len(seatings(["random", "heuristic"], 3))
    # stderr is not a terminal: the bar is printed once, as it ends
    last = [line for line in done.stderr.splitlines() if "tables" in line][-1]
    assert f"{tables}/{tables} tables" in last and " moves · 1/1 deals" in last, last
    assert "elapsed" in last and "ETA 0:00:00" in last, last
