"""Tournaments with outside entrants, unit level: `--entrants` parsing, the time-control flags,
per-seat statistics from game records (real protobuf messages), the result file's statistics
and its migration from the format before them, and the report's per-entrant table and caveat.
(End to end through a server with outside bots: tests/test_tournament_outside.py.)
"""

from __future__ import annotations

import csv
import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from croupier.v1 import croupier_pb2 as pb

from bots.arena import seatings
from bots.tournament import cli, entrants, report, stats
from bots.tournament.play import Runner, record_name
from bots.tournament.results import Outcome, ResultFile, merge
from bots.tournament.schedule import Match
from bots.tournament.stats import SeatStats

# --- entrants ---------------------------------------------------------------------------


def test_entrants_are_levels_ext_names_and_plain_names() -> None:
    assert entrants.parse("hard, ext:alice,bob,random") == ["hard", "alice", "bob", "random"]
    assert entrants.parse("ext:my.bot-2,ext:x_1") == ["my.bot-2", "x_1"]
    assert entrants.outside(["hard", "alice", "bob", "random"]) == ["alice", "bob"]
    assert entrants.parse_one("ext:" + "a" * 40) == "a" * 40


@pytest.mark.parametrize(("text", "says"), [
    ("hard,Alice", "bad entrant name 'Alice'"),
    ("hard,ext:", "bad entrant name 'ext:'"),
    ("hard,-bob", "bad entrant name '-bob'"),
    ("hard,ext:a:b", "bad entrant name"),
    ("hard,bob smith", "bad entrant name"),
    ("hard," + "a" * 41, "1 to 40"),
    ("hard,ext:medium", "medium is a built-in level"),
    ("alice,ext:alice", "alice more than once"),
    ("hard,hard", "hard more than once"),
    ("ext:alice", "at least two"),
    (",,", "at least two"),
])
def test_bad_entrants_are_refused_saying_why(text: str, says: str) -> None:
    with pytest.raises(ValueError) as caught:
        entrants.parse(text)
    assert says in str(caught.value)


def test_seats_are_reserved_by_level_or_by_entrant() -> None:
    level, other = entrants.seat_spec("hard"), entrants.seat_spec("alice")
    assert (level.kind, level.bot_level, level.entrant) == (pb.SEAT_KIND_BOT, "hard", "")
    assert (other.kind, other.bot_level, other.entrant) == (pb.SEAT_KIND_BOT, "", "alice")
    # listed seats: the entrant where the server fills it, the level on older servers
    assert entrants.seat_entrant(pb.SeatInfo(bot_level="", entrant="alice")) == "alice"
    assert entrants.seat_entrant(pb.SeatInfo(bot_level="hard", entrant="hard")) == "hard"
    assert entrants.seat_entrant(pb.SeatInfo(bot_level="hard")) == "hard"


def _meta(**extra: object) -> dict:
    return {"game": "dou_dizhu", "entrants": ["hard", "alice", "bob"], "players": 3,
            "options": {}, "deals": 2, "seed": "s", "move_seconds": 0, "match_seconds": 0,
            **extra}


def test_a_match_asks_for_entrant_seats_and_the_time_control() -> None:
    runner = Runner(None, None, _meta(move_seconds=2.5, match_seconds=30),  # type: ignore[arg-type]
                    Path("."))
    request = runner._request(Match(1, ("alice", "hard", "bob")))
    assert [(s.bot_level, s.entrant) for s in request.seats] == [
        ("", "alice"), ("hard", ""), ("", "bob")]
    assert request.options["turn_seconds"] == 2.5
    assert request.options["match_seconds"] == 30
    assert "deck" in request.options
    untimed = Runner(None, None, _meta(), Path("."))  # type: ignore[arg-type]
    options = untimed._request(Match(1, ("alice", "hard", "bob"))).options
    assert "turn_seconds" not in options and "match_seconds" not in options


def test_record_names_stay_distinct_and_plain() -> None:
    assert record_name(Match(3, ("hard", "alice", "bob"))) == "deal-00003-hard-alice-bob.json"
    # names may hold '-': then '+' separates the seats, so two seatings never share a file
    a = record_name(Match(0, ("x-y", "z", "x", "y-z")))
    b = record_name(Match(0, ("x", "y-z", "x-y", "z")))
    assert a != b and ":" not in a + b and "/" not in a + b


# --- flags ------------------------------------------------------------------------------


def _settings(*extra: str, entrants_text: str = "hard,ext:alice,bob") -> dict:
    args = cli.build_parser().parse_args(
        ["dou_dizhu", "--entrants", entrants_text, "--deals", "1", "--out", "unused", *extra])
    return cli._settings(args)


def test_time_control_flags_go_to_the_settings() -> None:
    meta = _settings("--move-seconds", "2", "--match-seconds", "20")
    assert meta["entrants"] == ["hard", "alice", "bob"]
    assert (meta["move_seconds"], meta["match_seconds"]) == (2, 20)
    # outside entrants: a turn timer unless told otherwise, so a dead program never stalls
    meta = _settings()
    assert (meta["move_seconds"], meta["match_seconds"]) == (cli.OUTSIDE_MOVE_SECONDS, 0)
    meta = _settings("--move-seconds", "0")
    assert (meta["move_seconds"], meta["match_seconds"]) == (0, 0)
    meta = _settings("--option", "turn_seconds=5")
    assert meta["move_seconds"] == 0 and meta["options"]["turn_seconds"] == 5
    meta = _settings(entrants_text="hard,random")
    assert (meta["move_seconds"], meta["match_seconds"]) == (0, 0)


@pytest.mark.parametrize(("extra", "says"), [
    (["--move-seconds", "-1"], "--move-seconds must be a positive number"),
    (["--move-seconds", "nan"], "--move-seconds must be a positive number"),
    (["--move-seconds", "2", "--match-seconds", "-3"], "--match-seconds must be a positive"),
    (["--move-seconds", "0", "--match-seconds", "10"], "--match-seconds needs --move-seconds"),
    (["--move-seconds", "2", "--option", "turn_seconds=5"], "give one of --move-seconds"),
    (["--move-seconds", "2", "--match-seconds", "9", "--option", "match_seconds=5"],
     "give one of --match-seconds"),
])
def test_bad_time_control_is_refused(extra: list[str], says: str) -> None:
    with pytest.raises(ValueError) as caught:
        _settings(*extra)
    assert says in str(caught.value)


def test_the_command_refuses_bad_entrants_before_connecting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli.main(["dou_dizhu", "--entrants", "hard,ext:easy", "--deals", "1",
                     "--server", "127.0.0.1:1", "--out", str(tmp_path / "o")])
    assert code == 2
    assert "easy is a built-in level" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


# --- statistics from records --------------------------------------------------------------


def _record(players: int, moves: list[dict]) -> pb.GameRecord:
    return pb.GameRecord(game="dou_dizhu", players=players,
                         moves=[pb.RecordedMove(version=i + 1, move="pass", **m)
                                for i, m in enumerate(moves)])


def test_seat_statistics_come_from_the_records_moves() -> None:
    record = _record(3, [
        {"seat": 0, "seconds": 0.5},
        {"seat": 1, "seconds": 2.0, "auto": True},        # the server's timer: a timeout
        {"seat": 2, "seconds": 1.5, "fallback": "late"},  # late answer: a timeout
        {"seat": 0, "seconds": 0.25, "fallback": "illegal"},
        {"seat": 1, "seconds": 0.75, "fallback": "garbage"},
        {"seat": 2, "seconds": 0.1, "fallback": "crashed"},
        {"seat": 0, "seconds": 0.75},
        {"seat": 2, "seconds": 0.4},
    ])
    s0, s1, s2 = stats.of_record(record)
    assert s0 == SeatStats(decisions=3, timeouts=0, illegal=1, crashes=0, think_seconds=1.5,
                           thinks=3)
    assert s0.mean_think == 0.5
    # the timer's move is a decision and a timeout, but not the seat's thinking
    assert s1 == SeatStats(2, 1, 1, 0, 0.75, 1)
    assert s2.decisions == 3 and s2.timeouts == 1 and s2.crashes == 1 and s2.illegal == 0
    assert s2.mean_think == pytest.approx(2.0 / 3)
    # a seat that never moved has no mean
    assert stats.of_record(_record(2, [{"seat": 0, "seconds": 1.0}]))[1].mean_think is None


def test_entrant_statistics_sum_every_seat_of_theirs() -> None:
    a, b = SeatStats(2, 1, 0, 0, 1.0, 1), SeatStats(3, 0, 1, 1, 3.0, 3)
    summed = stats.per_entrant([
        (("alice", "hard", "alice"), (a, b, b)),
        (("hard", "alice", "hard"), (a, a, b)),
        (("hard", "alice", "alice"), ()),  # a table of an older result file: no counts
    ])
    assert summed["alice"] == (2, a + b + a)
    assert summed["hard"] == (2, b + a + b)
    assert summed["alice"][1].mean_think == pytest.approx(5.0 / 5)
    assert summed["hard"][1].mean_think == pytest.approx(7.0 / 7)


# --- result file --------------------------------------------------------------------------


def test_statistics_are_stored_per_match_and_seat(tmp_path: Path) -> None:
    f = ResultFile(tmp_path / "results.sqlite")
    f.claim_meta({**_meta(), "shard": [0, 1]})
    m = Match(0, ("alice", "hard", "bob"))
    seats = (SeatStats(5, 1, 0, 0, 2.5, 4), SeatStats(5, 0, 0, 0, 0.5, 5),
             SeatStats(4, 0, 2, 1, 8.0, 4))
    f.started(m, "t1")
    f.finished(m, "t1", [2, -1, -1], [0], 1.0, seats)
    f.finished(m, "t1", [2, -1, -1], [0], 2.0, seats)  # written twice: still one set
    (o,) = f.outcomes()
    assert o.stats == seats and o.seating == m.seating
    f.close()
    with closing(sqlite3.connect(tmp_path / "results.sqlite")) as db:
        assert db.execute("SELECT COUNT(*) FROM seat_stats").fetchone() == (3,)


def test_time_control_is_part_of_the_settings_a_resume_must_match(tmp_path: Path) -> None:
    f = ResultFile(tmp_path / "r.sqlite")
    f.claim_meta({**_meta(move_seconds=2.0), "shard": [0, 1]})
    f.claim_meta({**_meta(move_seconds=2.0), "shard": [0, 1]})  # the same: resumes
    for other in (_meta(), _meta(move_seconds=3.0), _meta(move_seconds=2.0, match_seconds=5)):
        with pytest.raises(ValueError, match="other settings"):
            f.claim_meta({**other, "shard": [0, 1]})
    # a caller that leaves the new keys out means their defaults: refused here too
    legacy = {k: v for k, v in _meta().items() if k not in ("move_seconds", "match_seconds")}
    with pytest.raises(ValueError, match="move_seconds"):
        f.claim_meta({**legacy, "shard": [0, 1]})
    f.close()


OLD_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE matches (
  deal INTEGER NOT NULL, seating TEXT NOT NULL, table_id TEXT NOT NULL DEFAULT '',
  scores TEXT, winners TEXT, finished_at REAL, PRIMARY KEY (deal, seating)
);
"""


def _old_file(path: Path, shard: list[int], deals: list[int]) -> dict:
    """A result file as versions before entrants wrote it: no time control in its settings,
    no statistics."""
    meta = {"game": "dou_dizhu", "entrants": ["random", "heuristic"], "players": 3,
            "options": {}, "deals": 2, "seed": "croupier", "shard": shard}
    with closing(sqlite3.connect(path)) as db:
        db.executescript(OLD_SCHEMA)
        db.executemany("INSERT INTO meta VALUES (?, ?)",
                       [(k, json.dumps(v, sort_keys=True)) for k, v in meta.items()])
        for d in deals:
            for i, s in enumerate(seatings(["random", "heuristic"], 3)):
                db.execute("INSERT INTO matches VALUES (?, ?, ?, ?, ?, ?)",
                           (d, ",".join(s), f"old-{d}-{i}", "[2, -1, -1]", "[0]", 1.0))
        db.commit()
    return meta


def test_an_old_result_file_loads_resumes_and_merges(tmp_path: Path) -> None:
    old = tmp_path / "a" / "results-0-of-2.sqlite"
    old.parent.mkdir()
    meta = _old_file(old, [0, 2], [0])
    f = ResultFile(old)
    outcomes = f.outcomes()
    assert len(outcomes) == len(seatings(["random", "heuristic"], 3))
    assert all(o.stats == () for o in outcomes)
    # resuming it with today's settings (no time control) is the same tournament
    f.claim_meta({**meta, "move_seconds": 0, "match_seconds": 0})
    with pytest.raises(ValueError, match="move_seconds"):
        f.claim_meta({**meta, "move_seconds": 5, "match_seconds": 0})
    assert f.meta()["move_seconds"] == 0  # the file now states it
    f.close()
    # the other shard, written by this version with statistics
    new = ResultFile(tmp_path / "results-1-of-2.sqlite")
    new.claim_meta({**meta, "shard": [1, 2], "move_seconds": 0, "match_seconds": 0})
    per_seat = (SeatStats(4, 0, 0, 0, 0.4, 4), SeatStats(3, 1, 0, 0, 0.3, 2),
                SeatStats(3, 0, 0, 0, 0.3, 3))
    for s in seatings(["random", "heuristic"], 3):
        new.finished(Match(1, s), "new", [1, 1, -2], [0, 1], 1.0, per_seat)
    new.close()
    merged_meta, merged = merge([tmp_path])
    assert {o.deal for o in merged} == {0, 1}
    rep = report.build(merged_meta, merged)
    assert rep["deals_complete"] == 2
    counted = {r["entrant"]: r for r in rep["entrant_stats"]}
    tables = len(seatings(["random", "heuristic"], 3))
    # only the new shard's tables carry statistics
    assert counted["random"]["tables"] + counted["heuristic"]["tables"] == 2 * tables
    assert sum(r["decisions"] for r in counted.values()) == 10 * tables
    assert rep["caveat"] == "" and rep["outside_entrants"] == []


def test_shards_with_other_time_controls_do_not_merge(tmp_path: Path) -> None:
    for i, move in enumerate((0, 2)):
        f = ResultFile(tmp_path / f"results-{i}-of-2.sqlite")
        f.claim_meta({**_meta(move_seconds=move), "shard": [i, 2]})
        f.close()
    with pytest.raises(ValueError, match="another tournament"):
        merge([tmp_path])


# --- report ---------------------------------------------------------------------------


def _outcomes() -> list[Outcome]:
    out = []
    names = ["hard", "alice", "bob"]
    for d in range(2):
        for s in seatings(names, 3):
            per_seat = tuple(
                SeatStats(10, 2, 1, 0, 5.0, 8) if n == "alice"
                else SeatStats(10, 0, 0, 1, 1.0, 10) if n == "bob"
                else SeatStats(10, 0, 0, 0, 2.0, 10)
                for n in s)
            scores = tuple(2 if n == "hard" else -1 for n in s)
            out.append(Outcome(d, s, scores, (s.index("hard"),), f"t{d}{s}", per_seat))
    return out


def test_the_report_shows_each_entrants_play_and_the_caveat(tmp_path: Path) -> None:
    rep = report.build(_meta(move_seconds=2, match_seconds=30), _outcomes())
    tables = 2 * len(seatings(["hard", "alice", "bob"], 3))
    rows = {r["entrant"]: r for r in rep["entrant_stats"]}
    assert [r["entrant"] for r in rep["entrant_stats"]] == ["hard", "alice", "bob"]
    assert rows["alice"] == {"entrant": "alice", "kind": "outside", "tables": tables,
                             "decisions": 10 * tables, "timeouts": 2 * tables,
                             "illegal": tables, "crashes": 0, "mean_think_seconds": 5.0 / 8}
    assert rows["bob"]["crashes"] == tables and rows["hard"]["kind"] == "level"
    assert rep["outside_entrants"] == ["alice", "bob"]
    assert "alice, bob" in rep["caveat"] and "duplicate format assumes" in rep["caveat"]
    written = report.write(rep, tmp_path)
    md = (tmp_path / "report.md").read_text()
    assert f"| alice | outside | {tables} | {10 * tables} | {2 * tables} | {tables} | 0 | 0.625 |" in md
    assert "**Caveat:** Outside entrants (alice, bob)" in md
    assert "2 s per move plus a 30 s bank per seat" in md
    with (tmp_path / "report.csv").open() as f:
        by_name = {r["entrant"]: r for r in csv.DictReader(f)}
    assert by_name["bob"]["crashes"] == str(tables) and by_name["alice"]["kind"] == "outside"
    assert float(by_name["hard"]["mean_think_seconds"]) == 0.2
    back = json.loads((tmp_path / "report.json").read_text())
    assert back["entrant_stats"] == rep["entrant_stats"] and back["caveat"] == rep["caveat"]
    assert tmp_path / "ratings.png" in written


def test_levels_only_have_no_caveat() -> None:
    outcomes = [Outcome(0, s, (1, -1, 0), (0,)) for s in seatings(["hard", "easy"], 3)]
    rep = report.build(_meta(entrants=["hard", "easy"]), outcomes)
    md = report.markdown(rep)
    assert rep["caveat"] == "" and "Caveat" not in md and "no time control" in md
    # results without statistics: nothing counted, no mean
    assert {r["entrant"]: (r["tables"], r["mean_think_seconds"])
            for r in rep["entrant_stats"]} == {"hard": (0, None), "easy": (0, None)}
    assert "| hard | level | 0 | 0 | 0 | 0 | 0 | n/a |" in md


def test_replays_leave_the_tables_own_options_out() -> None:
    """A timed tournament's records hold turn_seconds and match_seconds, which the server
    never gives the engine: `croupier replay` must not either."""
    from bots import records
    from service.validation import TABLE_OPTIONS

    assert set(TABLE_OPTIONS) <= records.TABLE_OPTIONS


@pytest.mark.parametrize(("text", "level"), [("hard,hardd", "hard"), ("hard,medum", "medium"),
                                             ("random,heuristik", "heuristic")])
def test_a_mistyped_level_is_refused_with_the_level_it_resembles(text: str, level: str) -> None:
    with pytest.raises(ValueError) as caught:
        entrants.parse(text)
    assert f"did you mean {level}?" in str(caught.value) and "ext:" in str(caught.value)
    name = text.split(",")[1]
    assert entrants.parse(text.replace(name, f"ext:{name}"))[1] == name  # spelled out: allowed
