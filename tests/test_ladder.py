"""The ladder: RateMatch and ListRatings through real server processes, and the stores' atomic
rating step on memory, SQLite and the real Redis.

Tables are played to their end by the test itself, holding every bot seat (JoinTable bot=true)
and moving at random: what is rated is the tables' stored results, whoever played them.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import grpc
import pytest
from croupier.v1 import croupier_pb2 as pb
from openskill.models import PlackettLuce

from service.model import RatedMatch, Rating
from service.store import Store, TableRated
from service.store_memory import MemoryStore
from service.store_redis import RedisStore
from service.store_sqlite import SQLiteStore
from tests.ladder_support import LEVELS3, bot_table, options, played, rate, standings
from tests.store_support import REDIS_URL, redis_cleanup, redis_prefix
from tests.support import Client, ServerProcess, rpc_code

C = grpc.StatusCode
TABLES_KEY = "ladder-tables-key-0123456789abcdef"
BOTS_KEY = "ladder-bots-key-0123456789abcdefgh"

pytestmark = pytest.mark.e2e


# --- the stores -------------------------------------------------------------------------
@pytest.fixture(params=["memory", "sqlite", "redis"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Store]]:
    """A factory: its stores share one backing (one memory, one SQLite file, one prefix)."""
    if request.param == "memory":
        shared = MemoryStore()
        yield lambda: shared
    elif request.param == "sqlite":
        yield lambda: SQLiteStore(tmp_path / "ladder.db")
    else:
        prefix = redis_prefix()
        yield lambda: RedisStore(f"{REDIS_URL}?prefix={prefix}")
        redis_cleanup(prefix)


def bump(match: RatedMatch, calls: list[int] | None = None
         ) -> Callable[[Any], list[Rating]]:
    """An update that adds 1 to each entrant's mu and counts the match."""

    def update(current: Any) -> list[Rating]:
        if calls is not None:
            calls.append(1)
        out = []
        for e in match.entrants:
            old = current.get(e)
            mu, n = (old.mu, old.matches) if old else (25.0, 0)
            out.append(Rating(match.ladder, match.game, e, mu + 1, 8.0, n + 1, match.rated_at))
        return out

    return update


def a_match(match_id: str, tables: Sequence[str], entrants: Sequence[str] = ("a", "b"),
            ladder: str = "main") -> RatedMatch:
    return RatedMatch(ladder, match_id, "dou_dizhu", tuple(tables), tuple(entrants), 1.0)


def test_store_rates_a_match_once(make_store: Callable[[], Store]) -> None:
    async def run() -> None:
        store = make_store()
        try:
            m = a_match("m1", ["t1", "t2"])
            assert await store.rated_match("main", "m1") is None
            assert await store.rate(m, bump(m)) is None
            assert await store.rated_match("main", "m1") == m
            before = await store.ratings("main")
            assert [(r.entrant, r.mu, r.matches) for r in before] == [("a", 26.0, 1),
                                                                      ("b", 26.0, 1)]
            # the same id again: the stored match, nothing written, the update never run
            calls: list[int] = []
            again = a_match("m1", ["t1", "t2"], entrants=("a", "c"))
            assert await store.rate(again, bump(again, calls)) == m
            # a table of m1 under another id: refused whole
            other = a_match("m2", ["t3", "t2"])
            with pytest.raises(TableRated) as refused:
                await store.rate(other, bump(other, calls))
            assert (refused.value.table_id, refused.value.match_id) == ("t2", "m1")
            assert calls == [] and await store.ratings("main") == before
            assert await store.rated_match("main", "m2") is None
            # another ladder, another game: their own standings
            third = RatedMatch("side", "m1", "dobro", ("t9",), ("a", "b"), 2.0)
            assert await store.rate(third, bump(third)) is None
            assert await store.ratings("main") == before
            assert [r.game for r in await store.ratings("side")] == ["dobro", "dobro"]
            assert await store.ratings("side", "dou_dizhu") == []
        finally:
            await store.close()

    asyncio.run(run())


def test_store_racing_ratings_land_once_and_none_is_lost(
    make_store: Callable[[], Store],
) -> None:
    """Two stores (connections, or processes' worth of them) rate one match at once: one
    rates it; and two different matches of the same entrants at once both count."""

    async def run() -> None:
        stores = [make_store() for _ in range(2)]
        try:
            same = a_match("same", ["t1"])
            outcomes = await asyncio.gather(*(s.rate(same, bump(same)) for s in stores))
            assert sorted(o is None for o in outcomes) == [False, True]
            for round_ in range(5):
                ms = [a_match(f"r{round_}-{i}", [f"u{round_}-{i}"]) for i in range(2)]
                done = await asyncio.gather(*(s.rate(m, bump(m))
                                              for s, m in zip(stores, ms, strict=True)))
                assert done == [None, None]
            ratings = await stores[0].ratings("main")
            assert [(r.matches, r.mu) for r in ratings] == [(11, 36.0), (11, 36.0)]
        finally:
            for s in stores:
                await s.close()

    asyncio.run(run())


# --- through a real server ----------------------------------------------------------------
def totals(client: Client, table_id: str) -> list[int]:
    return list(client.view(table_id).result.totals)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    proc = ServerProcess(db=tmp_path_factory.mktemp("ladder") / "ladder.db").start()
    yield proc
    proc.stop()


def test_rate_match_ranks_entrants_by_their_summed_points(client: Client) -> None:
    ladder = "points"
    seatings = [LEVELS3, ("heuristic", "easy", "random"), ("easy", "random", "heuristic")]
    tables = [played(client, bot_table(client, s, ladder=ladder, deals=1), seed)
              for seed, s in enumerate(seatings)]
    points = dict.fromkeys(LEVELS3, 0)
    for t, seating in zip(tables, seatings, strict=True):
        for entrant, total in zip(seating, totals(client, t), strict=True):
            points[entrant] += total
    assert standings(client, ladder) == []

    reply = rate(client, ladder, "deal-1", tables)
    assert not reply.already_rated
    # what the library says for this ranking, from fresh ratings
    model = PlackettLuce()
    order = list(points)  # the entrants as they first appear: table 0's seats
    ranks = [1.0 + sum(1 for q in points.values() if q > points[e]) for e in order]
    expected = model.rate([[model.rating(name=e)] for e in order], ranks=ranks)
    want = {e: (t[0].mu, t[0].sigma) for e, t in zip(order, expected, strict=True)}
    got = {r.entrant: (r.mu, r.sigma) for r in reply.ratings}
    assert got.keys() == want.keys()
    for e in want:
        assert got[e] == pytest.approx(want[e])
    listed = standings(client, ladder)
    # best ordinal first; equal ones (tied points) by name
    assert [row[1] for row in listed] == sorted(
        want, key=lambda e: (-round(want[e][0] - 3 * want[e][1], 9), e))
    for game, _, mu, sigma, ordinal, matches in listed:
        assert game == "dou_dizhu" and matches == 1
        assert ordinal == pytest.approx(mu - 3 * sigma)
    best = max(points.values())
    top = [e for e in points if points[e] == best]
    assert listed[0][1] in top

    # the same match again: already rated, nothing changes
    again = rate(client, ladder, "deal-1", list(reversed(tables)))
    assert again.already_rated
    assert sorted(r.entrant for r in again.ratings) == sorted(LEVELS3)
    assert standings(client, ladder) == listed
    # a second match moves the ratings on and counts
    more = [played(client, bot_table(client, s, ladder=ladder, deals=1), 10 + i)
            for i, s in enumerate(seatings)]
    assert not rate(client, ladder, "deal-2", more).already_rated
    assert {row[5] for row in standings(client, ladder)} == {2}
    assert standings(client, ladder, "dobro") == []
    assert [row[1] for row in standings(client, ladder, "dou_dizhu")] == [
        row[1] for row in standings(client, ladder)]


def test_refusals_say_why_and_change_nothing(client: Client, server: ServerProcess) -> None:
    ladder = "refusals"
    done = played(client, bot_table(client, ladder=ladder, deals=1), 1)
    done2 = played(client, bot_table(client, ladder=ladder, deals=1), 2)
    unfinished = bot_table(client, ladder=ladder, deals=1)
    no_ladder = played(client, bot_table(client, deals=1), 3)
    elsewhere = played(client, bot_table(client, ladder="other", deals=1), 4)
    other_options = played(client, bot_table(client, ladder=ladder, deals=2), 5)
    dobro = played(client, bot_table(client, ("random", "heuristic"), game="dobro",
                                     ladder=ladder, rounds=1), 6)
    one_entrant = played(client, bot_table(client, ("random",) * 3, ladder=ladder, deals=1), 7)
    # a seat open to people, taken by a person: no entrant of a ladder
    human = client.create(seats=[pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN),
                                 pb.SeatSpec(kind=pb.SEAT_KIND_BOT, bot_level="random"),
                                 pb.SeatSpec(kind=pb.SEAT_KIND_BOT, bot_level="heuristic")],
                          options=options(ladder=ladder, deals=1)).table_id
    client.join(human, seat=0, name="person")
    client.join(human, seat=1, bot=True)
    client.join(human, seat=2, bot=True)
    played(client, human, 8)
    assert not rate(client, ladder, "first", [done]).already_rated
    before = standings(client, ladder)

    cases: list[tuple[str, str, list[str], grpc.StatusCode, str]] = [
        ("", "m", [done2], C.INVALID_ARGUMENT, "ladder is required"),
        ("Main!", "m", [done2], C.INVALID_ARGUMENT, "ladder must be"),
        ("x" * 41, "m", [done2], C.INVALID_ARGUMENT, "ladder must be"),
        (ladder, "", [done2], C.INVALID_ARGUMENT, "match_id is required"),
        (ladder, "m" * 129, [done2], C.INVALID_ARGUMENT, "at most 128"),
        (ladder, "bad\nid", [done2], C.INVALID_ARGUMENT, "printable"),
        (ladder, "m", [], C.INVALID_ARGUMENT, "table_ids is required"),
        (ladder, "m", [done2, done2], C.INVALID_ARGUMENT, "twice"),
        (ladder, "m", [done2, ""], C.INVALID_ARGUMENT, "table_id is required"),
        (ladder, "m", ["t"] * 257, C.INVALID_ARGUMENT, "at most 256 tables"),
        (ladder, "m", [done2, "no-such-table"], C.NOT_FOUND, "no-such-table"),
        (ladder, "m", [done2, unfinished], C.FAILED_PRECONDITION, "only finished tables"),
        (ladder, "m", [no_ladder], C.FAILED_PRECONDITION, "no ladder option"),
        (ladder, "m", [elsewhere], C.FAILED_PRECONDITION, "its ladder option is 'other'"),
        (ladder, "m", [done2, other_options], C.FAILED_PRECONDITION, "one deal"),
        (ladder, "m", [done2, dobro], C.FAILED_PRECONDITION, "different games"),
        (ladder, "m", [one_entrant], C.FAILED_PRECONDITION, "one entrant only"),
        (ladder, "m", [human], C.FAILED_PRECONDITION, "seat 0"),
        (ladder, "m", [done2, done], C.FAILED_PRECONDITION, "rated under match 'first'"),
        (ladder, "first", [done2], C.FAILED_PRECONDITION, "was rated with other tables"),
    ]
    for lad, match_id, tables, code, words in cases:
        got, message = rpc_code(rate, client, lad, match_id, tables)
        assert (got, words in message) == (code, True), (lad, match_id, message)
        assert len(message) < 300  # a 257-table list or a long id is never echoed whole
    assert standings(client, ladder) == before
    # nothing was marked rated by a refusal: done2 still rates, under a new id
    assert not rate(client, ladder, "second", [done2]).already_rated
    assert rpc_code(standings, client, "Bad Name")[0] == C.INVALID_ARGUMENT
    code, message = rpc_code(standings, client, ladder, "no_such_game")
    assert code == C.INVALID_ARGUMENT and "no_such_game" in message
    assert "rpc_internal_error" not in server.log_text()


def test_ladder_table_option_is_checked(client: Client) -> None:
    for bad in ("", "Main", "a b", "-x", "x" * 41, 7, True):
        code, message = rpc_code(client.create, options=options(ladder=bad))
        assert code == C.INVALID_ARGUMENT and "ladder" in message, bad
    table = client.create(options=options(ladder="main.v2_x-1"))
    assert dict(table.options)["ladder"] == "main.v2_x-1"


def test_keys_guard_rating_not_the_standings(tmp_path: Path) -> None:
    (tmp_path / "keys").write_text(f"{TABLES_KEY} tables\n{BOTS_KEY} bots\n")
    proc = ServerProcess(db=tmp_path / "keyed.db",
                         extra=("--api-keys", str(tmp_path / "keys"))).start()
    client = Client(proc.address)
    try:
        tables_md = [("x-api-key", TABLES_KEY)]
        bots_md = [("x-api-key", BOTS_KEY)]
        done = played(client, bot_table(client, keys=(TABLES_KEY, BOTS_KEY), ladder="k",
                                      deals=1), 1)
        code, message = rpc_code(rate, client, "k", "m", [done])
        assert code == C.UNAUTHENTICATED and "x-api-key" in message
        code, message = rpc_code(rate, client, "k", "m", [done], bots_md)
        assert code == C.PERMISSION_DENIED and "tables" in message and BOTS_KEY not in message
        assert standings(client, "k") == []
        assert not rate(client, "k", "m", [done], tables_md).already_rated
        assert len(standings(client, "k")) == 3  # public: no key
    finally:
        client.close()
        proc.stop()


def race(servers: Sequence[ServerProcess], ladder: str, match_id: str,
         tables: Sequence[str]) -> list[bool]:
    """RateMatch of one match sent to every server at once; their already_rated answers."""
    clients = [Client(s.address) for s in servers]
    start = threading.Barrier(len(clients))
    answers: list[bool] = []
    errors: list[BaseException] = []

    def go(c: Client) -> None:
        try:
            start.wait(10)
            answers.append(rate(c, ladder, match_id, tables).already_rated)
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=go, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    for c in clients:
        c.close()
    assert not errors, errors
    return answers


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
def test_servers_racing_to_rate_one_match_rate_it_once(tmp_path: Path, backend: str) -> None:
    prefix = redis_prefix()
    store = f"sqlite:{tmp_path / 'shared.db'}" if backend == "sqlite" else (
        f"{REDIS_URL}?prefix={prefix}")
    servers = [ServerProcess(db=tmp_path / f"s{i}.db", store=store).start() for i in range(3)]
    client = Client(servers[0].address)
    try:
        for n in range(3):
            tables = [played(client, bot_table(client, s, ladder="race", deals=1), 10 * n + i)
                      for i, s in enumerate([LEVELS3, tuple(reversed(LEVELS3))])]
            assert sorted(race(servers, "race", f"m{n}", tables)) == [False, True, True]
        rows = standings(client, "race")
        assert sorted(row[5] for row in rows) == [3, 3, 3]
        # every replica serves the same standings
        for s in servers[1:]:
            other = Client(s.address)
            try:
                assert standings(other, "race") == rows
            finally:
                other.close()
    finally:
        client.close()
        for s in servers:
            s.stop()
        if backend == "redis":
            redis_cleanup(prefix)


def test_ratings_survive_a_restart(tmp_path: Path) -> None:
    proc = ServerProcess(db=tmp_path / "restart.db").start()
    client = Client(proc.address)
    try:
        done = played(client, bot_table(client, ladder="main", deals=1), 3)
        rate(client, "main", "m", [done])
        rows = standings(client)  # empty ladder: "main"
        assert len(rows) == 3
    finally:
        client.close()
        proc.kill()
    proc = ServerProcess(db=tmp_path / "restart.db", port=proc.port).start()
    client = Client(proc.address)
    try:
        assert standings(client, "main") == rows
        assert rate(client, "main", "m", [done]).already_rated
    finally:
        client.close()
        proc.stop()
