"""Tournaments with outside entrants end to end: a real server, `croupier bots` for the level,
a Python bot on the SDK (examples/random_bot.py) and the Node bot over the bridge
(examples/node_bot.js), a one-deal tournament of each game to its report; and a tournament in
which an outside program crashes, answers garbage and illegal moves and sleeps past its time,
which still ends, with each of those counted in the report.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from croupier.v1 import croupier_pb2 as pb

from bots import records
from bots.tournament.schedule import Seating
from tests.bot_support import CROUPIER, REPO, Bots, Proc, Server, child_env, stub_for

NODE = shutil.which("node")
GAMES = {  # game -> extra flags: three players where the game allows it, fewer seatings
    "dou_dizhu": [], "doppelkopf": ["--option", "bistro=true"], "dobro": ["--players", "3"],
    "dos": ["--players", "3"], "sobe_e_desce": ["--option", "start_score=3"],
}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, list[str]]]:
    """The server, the level's workers and the outside entrants' programs; yields the server
    and the outside entrants that are playing (the Node one only where node is installed)."""
    tmp = tmp_path_factory.mktemp("outside")
    server = Server(tmp / "c.db", tmp / "server.log")
    procs: list[Proc] = [Bots(server.address, tmp / "bots.log", workers=1, poll=0.1,
                              levels="random")]
    outside = ["pybot"]
    procs.append(Proc("pybot", [sys.executable, str(REPO / "examples" / "random_bot.py"),
                                "--server", server.address, "--entrant", "pybot"],
                          tmp / "pybot.log"))
    if NODE:
        outside.append("nodebot")
        procs.append(Proc("nodebot", [CROUPIER, "bot-bridge", "--entrant", "nodebot",
                                      "--server", server.address, "--poll", "0.1", "--",
                                      NODE, str(REPO / "examples" / "node_bot.js"),
                                      "--shared"],
                          tmp / "nodebot.log"))
    try:
        yield server, outside
    finally:
        for p in procs:
            p.stop()
        server.stop()


def _tournament(server: Server, game: str, entrants: list[str], out: Path,
                *extra: str) -> list[str]:
    return [CROUPIER, "tournament", game, "--entrants", ",".join(entrants), "--deals", "1",
            "--server", server.address, "--out", str(out), "--parallel", "6", "--no-progress",
            *extra]


def _describe(server: Server, done: subprocess.CompletedProcess[str]) -> str:
    return f"exit {done.returncode}\n{done.stderr}\n{server.describe()}"


def test_every_game_with_outside_entrants(stack: tuple[Server, list[str]],
                                          tmp_path: Path) -> None:
    server, outside = stack
    entrants = ["random", *(f"ext:{name}" for name in outside)]
    running = {
        game: subprocess.Popen(_tournament(server, game, entrants, tmp_path / game,
                                           "--filler", "random", *extra),
                               cwd=REPO, env=child_env(), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        for game, extra in GAMES.items()
    }
    for game, proc in running.items():
        stdout, stderr = proc.communicate(timeout=240)
        done = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
        assert done.returncode == 0, (game, _describe(server, done))
        out = tmp_path / game
        rep = json.loads((out / "report.json").read_text())
        files = sorted((out / "records").glob("*.json"))
        names = ["random", *outside]
        assert rep["deals_complete"] == 1 and rep["tables"] == len(files)
        players = records.load(files[0]).players
        assert len(files) == len(Seating("random").arrangements(names, players))
        rows = {r["entrant"]: r for r in rep["entrant_stats"]}
        assert list(rows) == names, game
        for name in names:
            r = rows[name]
            assert r["tables"] == len(files) and r["decisions"] > 0, (game, r)
            assert r["crashes"] == 0 and r["illegal"] == 0, (game, r)
            assert r["mean_think_seconds"] is not None and r["mean_think_seconds"] >= 0
            assert r["kind"] == ("level" if name == "random" else "outside")
        md = (out / "report.md").read_text()
        assert f"**Caveat:** Outside entrants ({', '.join(outside)})" in md, game
        for path in files:
            rec = records.load(path)
            assert records.replay(rec) == rec.result
            # the outside seats were played by their own programs, not the workers, each
            # holding one seat of the table (--filler random took the others)
            assert [s.entrant for s in rec.seats] == path.stem.split("-")[2:], path.name
            assert all([s.entrant for s in rec.seats].count(o) == 1 for o in outside)


# A bridge program that misbehaves on purpose, by its n-th decision at each seat: 1 it sleeps
# past its time, 2 garbage, 3 an illegal move, 4 it dies; then (restarted by the bridge, a
# file per seat tells it so) legal moves. Each act is written to a file, one JSON line, so the
# test knows every kind happened.
WILD = textwrap.dedent("""
    import json, pathlib, random, sys, time
    state = pathlib.Path(sys.argv[1])
    log = state / "acts.jsonl"
    print(json.dumps({"hello": "croupier-bot/1", "name": "wild", "mode": "per-seat"}), flush=True)
    n = 0
    for line in sys.stdin:
        msg = json.loads(line)
        if msg.get("type") != "decide":
            continue
        n += 1
        calm = state / f"{msg['table']}-{msg['seat']}"
        act = "move" if calm.exists() else {1: "sleep", 2: "garbage", 3: "illegal",
                                            4: "crash"}.get(n, "move")
        if act != "move":
            with log.open("a") as f:
                f.write(json.dumps({"table": msg["table"], "seat": msg["seat"], "act": act}) + "\\n")
        if act == "garbage":
            print("this is not json", flush=True)
        elif act == "illegal":
            print(json.dumps({"id": msg["id"], "move": "no such move"}), flush=True)
        elif act == "crash":
            calm.touch()
            sys.exit(3)
        else:
            if act == "sleep":
                time.sleep((msg["time_left"] or 0) + 0.5)
            move = random.choice(msg["legal_moves"])
            print(json.dumps({"id": msg["id"], "move": move}), flush=True)
""")


def _fallbacks(log: Path) -> dict[str, int]:
    """The bridge's own account of the moves it replaced, by reason (its log lines)."""
    count: dict[str, int] = {}
    for line in log.read_text().splitlines():
        if line.startswith("{"):
            event = json.loads(line)
            if event.get("event") == "decision_fallback":
                count[event["fallback"]] = count.get(event["fallback"], 0) + 1
    return count


def test_misbehaving_outside_entrant_is_counted(stack: tuple[Server, list[str]],
                                                tmp_path: Path) -> None:
    server, _ = stack
    state = tmp_path / "wild"
    state.mkdir()
    program = tmp_path / "wild.py"
    program.write_text(WILD)
    bridge = Proc("wild", [CROUPIER, "bot-bridge", "--entrant", "wild", "--server",
                           server.address, "--poll", "0.1", "--sandbox-write", str(state), "--",
                           sys.executable, str(program), str(state)], tmp_path / "wild.log")
    out = tmp_path / "t"
    try:
        done = subprocess.run(
            _tournament(server, "dou_dizhu", ["random", "ext:wild"], out, "--filler",
                        "random", "--move-seconds", "1", "--match-seconds", "0.5"),
            cwd=REPO, env=child_env(), capture_output=True, text=True, timeout=240)
    finally:
        bridge.stop()
    assert done.returncode == 0, _describe(server, done) + "\n" + bridge.describe()
    acts = {json.loads(line)["act"] for line in (state / "acts.jsonl").read_text().splitlines()}
    assert acts == {"sleep", "garbage", "illegal", "crash"}, acts
    replaced = _fallbacks(tmp_path / "wild.log")
    rep = json.loads((out / "report.json").read_text())
    tables = len(Seating("random").arrangements(["random", "wild"], 3))
    assert rep["tables"] == tables and rep["move_seconds"] == 1 and rep["match_seconds"] == 0.5
    wild = next(r for r in rep["entrant_stats"] if r["entrant"] == "wild")
    assert wild["tables"] == tables
    # the records (the server's account) agree with the bridge's own
    assert wild["illegal"] == replaced.get("garbage", 0) + replaced.get("illegal", 0) > 0, (
        wild, replaced)
    assert wild["crashes"] == replaced.get("crashed", 0) > 0, (wild, replaced)
    # timeouts: the bridge's late answers, and any move the server's timer made itself
    assert wild["timeouts"] >= replaced.get("late", 0) > 0, (wild, replaced)
    level = next(r for r in rep["entrant_stats"] if r["entrant"] == "random")
    assert level["crashes"] == 0 and level["illegal"] == 0
    md = (out / "report.md").read_text()
    assert "**Caveat:** Outside entrants (wild)" in md
    assert "1 s per move plus a 0.5 s bank per seat" in md
    for path in sorted((out / "records").glob("*.json")):
        rec = records.load(path)
        assert records.replay(rec) == rec.result
        assert rec.options["turn_seconds"] == 1 and rec.options["match_seconds"] == 0.5


def test_a_begun_table_with_outside_seats_is_adopted(stack: tuple[Server, list[str]],
                                                     tmp_path: Path) -> None:
    """Killed after CreateTable but before its id was stored: the restart knows the table by
    its seats' entrants (outside ones are not levels) and follows it instead of a new one."""
    from bots.tournament.play import Runner
    from bots.tournament.results import ResultFile
    from bots.tournament.schedule import Match

    server, _ = stack
    out = tmp_path / "adopt"
    out.mkdir()
    meta = {"game": "dou_dizhu", "entrants": ["random", "pybot"], "players": 3,
            "options": {}, "deals": 1, "seed": "adopt-outside", "move_seconds": 5,
            "match_seconds": 0, "filler": "random", "shared_seats": False,
            "seed_drawn": False, "run": "adopt"}
    results = ResultFile(out / "results.sqlite")
    results.claim_meta({**meta, "shard": [0, 1]})
    match = Match(0, ("pybot", "random", "random"))
    request = Runner(None, results, meta, out)._request(match)  # type: ignore[arg-type]
    results.started(match, "")  # what the killed run had written before CreateTable
    channel, stub = stub_for(server.address)
    with channel:
        orphan = stub.CreateTable(request, timeout=10).table_id
        seats = stub.GetView(pb.GetViewRequest(table_id=orphan), timeout=10).table.seats
    assert [(s.entrant, s.bot_level) for s in seats] == [
        ("pybot", ""), ("random", "random"), ("random", "random")]
    results.close()
    done = subprocess.run(
        _tournament(server, "dou_dizhu", ["random", "ext:pybot"], out, "--seed",
                    "adopt-outside", "--move-seconds", "5", "--filler", "random"),
        cwd=REPO, env=child_env(), capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, _describe(server, done)
    f = ResultFile(out / "results.sqlite")
    try:
        rows = {o.seating: o.table_id for o in f.outcomes()}
    finally:
        f.close()
    assert rows[match.seating] == orphan
    assert len(set(rows.values())) == len(Seating("random").arrangements(
        ["random", "pybot"], 3))
