"""Ratings of people and bot levels from rated tables, through a real server: a rated table
played to its end moves its players' and its bot level's ratings once (as OpenSkill says),
adds a history point each, and shows on the leaderboard and the profiles; unrated and
abandoned tables move nothing; a table the server did not see end is rated by its sweep;
racing raters rate a table once on every store.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import grpc
import pytest
from croupier.v1 import croupier_pb2 as pb
from google.protobuf import struct_pb2

from service.model import (
    PLAYERS_LADDER,
    RATED_OPTION,
    EventKind,
    RatedMatch,
    Rating,
    SeatKind,
    Status,
)
from service.people_ratings import rate_table
from service.player_standings import leaderboard
from service.store import Store
from service.store_memory import MemoryStore
from service.store_redis import RedisStore
from service.store_sqlite import SQLiteStore
from service.tables import SeatRequest, Tables
from tests.people_ratings_support import (
    GAME,
    Bot,
    Person,
    expected_ratings,
    person,
    play_in_process,
    write_table,
)
from tests.players_support import guest, join_as, player_md
from tests.store_support import REDIS_URL, redis_cleanup, redis_prefix
from tests.support import Client, ServerProcess, rpc_code, run_async

C = grpc.StatusCode


@pytest.fixture(scope="module")
def rated_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    proc = ServerProcess(db=tmp_path_factory.mktemp("people") / "croupier.db").start()
    yield proc
    proc.stop()


@pytest.fixture
def rc(rated_server: ServerProcess) -> Iterator[Client]:
    c = Client(rated_server.address)
    yield c
    c.close()


def written(db: Path, seats: Sequence[Person | Bot], rated: bool = True
            ) -> tuple[str, dict[int, str]]:
    """A playing table written into the server's SQLite file."""

    async def go() -> tuple[str, dict[int, str]]:
        store = SQLiteStore(db)
        try:
            return await write_table(store, seats, rated)
        finally:
            await store.close()

    return asyncio.run(go())


def played(client: Client, db: Path, seats: Sequence[Person | Bot], rated: bool = True,
           seed: int = 1) -> tuple[str, list[int]]:
    """A table played to its end through the server; its id and match totals."""
    table_id, tokens = written(db, seats, rated)
    client.tokens = dict(tokens)
    client.play_to_end(table_id, random.Random(seed))
    record = client.stub.ExportRecord(pb.ExportRecordRequest(table_id=table_id), timeout=10)
    return table_id, list(record.result.totals)


def board(client: Client, limit: int = 100, around: str = "") -> pb.ListLeaderboardResponse:
    return client.stub.ListLeaderboard(
        pb.ListLeaderboardRequest(game=GAME, limit=limit, around=around), timeout=10)


def entries(client: Client) -> dict[str, pb.LeaderboardEntry]:
    return {e.player_id: e for e in board(client).entries}


def profile(client: Client, player_id: str) -> pb.Profile:
    return client.stub.GetProfile(pb.GetProfileRequest(player_id=player_id), timeout=10)


def eventually(check: Callable[[], Any], timeout: float = 15.0) -> Any:
    """check()'s first truthy answer, polled (the rating lands just after the END)."""
    deadline = time.monotonic() + timeout
    while True:
        out = check()
        if out or time.monotonic() > deadline:
            assert out, "not within the timeout"
            return out
        time.sleep(0.05)


def test_a_rated_table_rates_its_players_and_bot_level(
    rc: Client, rated_server: ServerProcess,
) -> None:
    ann, bob = person("Ann"), person("Bob")
    seats: list[Person | Bot] = [ann, Bot("random"), bob]
    before = {e.player_id: (e.mu, e.sigma, e.games) for e in entries(rc).values()}
    table_id, totals = played(rc, rated_server.db, seats)
    ids = [ann.player_id, "bot:random", bob.player_id]
    now = eventually(lambda: (lambda got: got if ann.player_id in got else None)(entries(rc)))
    want = expected_ratings(ids, totals, {k: v[:2] for k, v in before.items()})
    for i, who in enumerate(ids):
        e = now[who]
        assert (e.mu, e.sigma) == pytest.approx(want[who], abs=1e-9), who
        assert e.ordinal == pytest.approx(e.mu - 3 * e.sigma)
        assert e.games == before.get(who, (0, 0, 0))[2] + 1
        assert e.bot == (i == 1)
    assert (now[ann.player_id].name, now[bob.player_id].name, now["bot:random"].name) == (
        "Ann", "Bob", "random")
    # the board is in ordinal order, ranked from 1, and counts everyone
    listed = board(rc)
    assert [e.ordinal for e in listed.entries] == sorted(
        (e.ordinal for e in listed.entries), reverse=True)
    assert listed.entries[0].rank == 1 and listed.total == len(listed.entries)

    # the profile: the rating, one history point (the rating after the table, the place
    # there), the table among the recent ones
    places = [1 + sum(1 for q in totals if q > p) for p in totals]
    got = profile(rc, ann.player_id)
    assert (got.player.player_id, got.player.name, got.player.guest) == (
        ann.player_id, "Ann", True)
    [game] = got.games
    assert game.game == GAME and game.games_played == 1
    assert game.rating.player_id == ann.player_id and game.rating.mu == now[ann.player_id].mu
    [point] = game.history
    assert (point.table_id, point.rank) == (table_id, places[0])
    assert (point.mu, point.sigma) == pytest.approx(want[ann.player_id], abs=1e-9)
    assert point.ordinal == pytest.approx(point.mu - 3 * point.sigma)
    assert [t.table_id for t in got.recent] == [table_id]
    assert got.recent[0].status == pb.TABLE_STATUS_FINISHED

    # around a player: that player within the window
    around = board(rc, limit=1, around=bob.player_id)
    assert [e.player_id for e in around.entries] == [bob.player_id]
    assert around.entries[0].rank == now[bob.player_id].rank


def test_an_unrated_table_changes_no_rating(rc: Client, rated_server: ServerProcess) -> None:
    ann, bob = person("Ann"), person("Bob")
    before = entries(rc).get("bot:random")
    played(rc, rated_server.db, [ann, Bot("random"), bob], rated=False, seed=2)
    time.sleep(2.5)  # past the hook and more than one sweep (every 10 rounds of 0.1 s)
    assert rpc_code(board, rc, around=ann.player_id)[0] == C.NOT_FOUND
    assert rpc_code(profile, rc, bob.player_id)[0] == C.NOT_FOUND
    assert entries(rc).get("bot:random") == before


def test_a_level_filling_a_persons_seat_is_rated_as_that_level(
    rc: Client, rated_server: ServerProcess,
) -> None:
    ann = person("Ann")
    before = entries(rc)
    table_id, _ = played(rc, rated_server.db, [Bot("easy"), ann, Bot("heuristic", filled=True)],
                         seed=3)
    now = eventually(lambda: (lambda got: got if ann.player_id in got else None)(entries(rc)))
    for level in ("bot:easy", "bot:heuristic"):
        assert now[level].bot and now[level].games == (
            before[level].games + 1 if level in before else 1)
    assert [p.table_id for p in profile(rc, ann.player_id).games[0].history] == [table_id]


def test_the_sweep_rates_a_table_whose_end_the_server_did_not_commit(
    rc: Client, rated_server: ServerProcess,
) -> None:
    """Another process (a replica that died right after) committed the END: nobody started
    the rating, the server's sweep finds the table and rates it."""
    ann, bob = person("Ann"), person("Bob")

    async def finish_elsewhere() -> str:
        store = SQLiteStore(rated_server.db)
        try:
            table_id, tokens = await write_table(store, [ann, bob, Bot("random")])
            await play_in_process(Tables(store), table_id, tokens, random.Random(4))
            return table_id
        finally:
            await store.close()

    table_id = asyncio.run(finish_elsewhere())
    got = eventually(lambda: (lambda p: p.games and p)(
        profile(rc, ann.player_id) if ann.player_id in entries(rc) else pb.Profile()))
    assert [p.table_id for p in got.games[0].history] == [table_id]


def test_clients_may_not_make_rated_tables(rc: Client) -> None:
    options = struct_pb2.Struct()
    options.update({"deals": 1, RATED_OPTION: True})
    code, message = rpc_code(rc.create, GAME, options=options)
    assert code == C.INVALID_ARGUMENT and RATED_OPTION in message
    options = struct_pb2.Struct()
    options.update({"ladder": PLAYERS_LADDER})
    code, message = rpc_code(rc.create, GAME, options=options)
    assert code == C.INVALID_ARGUMENT and PLAYERS_LADDER in message


def test_bad_requests_are_refused_clearly(rc: Client) -> None:
    def ask(**kw: Any) -> tuple[grpc.StatusCode, str]:
        return rpc_code(rc.stub.ListLeaderboard, pb.ListLeaderboardRequest(**kw), timeout=10)

    assert ask()[0] == C.INVALID_ARGUMENT
    assert ask(game="no_such_game")[0] == C.INVALID_ARGUMENT
    assert ask(game=GAME, limit=-1)[0] == C.INVALID_ARGUMENT
    assert ask(game=GAME, limit=101)[0] == C.RESOURCE_EXHAUSTED
    assert ask(game=GAME, around="x" * 300)[0] == C.INVALID_ARGUMENT
    assert ask(game=GAME, around="guest:nobody")[0] == C.NOT_FOUND
    assert rpc_code(profile, rc, "guest:nobody")[0] == C.NOT_FOUND
    assert rpc_code(profile, rc, "bot:hard")[0] == C.INVALID_ARGUMENT
    assert rpc_code(profile, rc, "a\nb")[0] == C.INVALID_ARGUMENT


def test_me_is_the_caller_by_their_identity(rc: Client, rated_server: ServerProcess) -> None:
    """"me" (and an empty player id) is the player of the identity token; none: refused."""
    def ask(md: Any = None, **kw: Any) -> tuple[grpc.StatusCode, str]:
        return rpc_code(rc.stub.ListLeaderboard, pb.ListLeaderboardRequest(**kw), metadata=md,
                        timeout=10)

    assert ask(game=GAME, around="me")[0] == C.UNAUTHENTICATED
    assert rpc_code(profile, rc, "me")[0] == C.UNAUTHENTICATED
    assert rpc_code(profile, rc, "")[0] == C.UNAUTHENTICATED
    player_id, token = guest(rc, "Zoe")
    md = player_md(token)
    # known to nobody yet, but to themselves: their own (empty) profile
    own = rc.stub.GetProfile(pb.GetProfileRequest(player_id="me"), metadata=md, timeout=10)
    assert (own.player.player_id, own.player.name, own.player.guest) == (player_id, "Zoe", True)
    assert list(own.games) == []
    assert ask(md, game=GAME, around="me")[0] == C.NOT_FOUND
    assert ask(player_md("not.a.token"), game=GAME, around="me")[0] == C.UNAUTHENTICATED
    zoe = Person(player_id, "Zoe")
    table_id, _ = played(rc, rated_server.db, [zoe, Bot("random"), person("Bob")], seed=6)
    mine = eventually(lambda: rc.stub.GetProfile(pb.GetProfileRequest(), metadata=md,
                                                 timeout=10).games)
    assert [p.table_id for p in mine[0].history] == [table_id]
    around = rc.stub.ListLeaderboard(pb.ListLeaderboardRequest(game=GAME, limit=1,
                                                               around="me"),
                                     metadata=md, timeout=10)
    assert [(e.player_id, e.name) for e in around.entries] == [(player_id, "Zoe")]


def test_a_table_made_by_the_servers_own_path_and_joined_by_identities(
    rc: Client, rated_server: ServerProcess,
) -> None:
    """Created as matchmaking creates them (`Tables.create(rated=True, player_ids=...)`, in
    the server's store) and joined with identity tokens through JoinTable: the seats the
    server bound to the players are rated under their ids and names."""
    (ann_id, ann_token), (bob_id, bob_token) = guest(rc, "Ann"), guest(rc, "Bob")

    async def create() -> str:
        store = SQLiteStore(rated_server.db)
        try:
            seats = [SeatRequest(SeatKind.HUMAN), SeatRequest(SeatKind.BOT, "easy"),
                     SeatRequest(SeatKind.HUMAN)]
            record = await Tables(store).create(GAME, 3, {"deals": 1}, seats,
                                                player_ids=[ann_id, "", bob_id], rated=True)
            return record.table_id
        finally:
            await store.close()

    table_id = asyncio.run(create())
    for token in (ann_token, bob_token):
        joined = join_as(rc, token, table_id)
        rc.tokens[joined.seat] = joined.token
    rc.join(table_id, seat=1, bot=True)
    rc.play_to_end(table_id, random.Random(7))
    now = eventually(lambda: (lambda got: got if bob_id in got else None)(entries(rc)))
    assert (now[ann_id].name, now[bob_id].name, now[ann_id].games) == ("Ann", "Bob", 1)
    assert now["bot:easy"].bot
    assert [p.table_id for p in profile(rc, ann_id).games[0].history] == [table_id]


# --- racing raters and what is never rated, on every store --------------------------------
@pytest.fixture(params=["memory", "sqlite", "redis"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Store]]:
    """A factory: its stores share one backing (one memory, one SQLite file, one prefix)."""
    if request.param == "memory":
        shared = MemoryStore()
        yield lambda: shared
    elif request.param == "sqlite":
        yield lambda: SQLiteStore(tmp_path / "people.db")
    else:
        prefix = redis_prefix()
        yield lambda: RedisStore(f"{REDIS_URL}?prefix={prefix}")
        redis_cleanup(prefix)


@run_async
async def test_racing_raters_rate_a_table_once(make_store: Callable[[], Store]) -> None:
    """Two replicas' raters (their own store connections) rate one finished table at once:
    one rates it, the other finds it rated; one history point each, one table counted."""
    stores = [make_store() for _ in range(2)]
    try:
        ann = person("Ann")
        table_id, tokens = await write_table(stores[0], [ann, Bot("hard"), Bot("hard")])
        await play_in_process(Tables(stores[0]), table_id, tokens, random.Random(5))
        outcomes = await asyncio.gather(*(rate_table(Tables(s), table_id) for s in stores))
        assert sorted(o is not None and o.already_rated for o in outcomes) == [False, True]
        assert {o.entrants for o in outcomes if o} == {(ann.player_id, "bot:hard")}
        again = await rate_table(Tables(stores[1]), table_id)
        assert again is not None and again.already_rated
        ratings = await stores[1].ratings(PLAYERS_LADDER)
        # two seats of one level: one entrant, the table counted once
        assert sorted((r.entrant, r.matches) for r in ratings) == sorted([
            (ann.player_id, 1), ("bot:hard", 1)])
        for who in (ann.player_id, "bot:hard"):
            points = await stores[1].rating_history(PLAYERS_LADDER, GAME, who)
            assert [p.table_id for p in points] == [table_id]
    finally:
        for s in stores:
            await s.close()


@run_async
async def test_abandoned_and_unfinished_tables_are_never_rated(
    make_store: Callable[[], Store],
) -> None:
    store = make_store()
    try:
        tables = Tables(store)
        ann = person("Ann")
        playing, _ = await write_table(store, [ann, Bot("easy"), Bot("medium")])
        assert await rate_table(tables, playing) is None
        record = await tables.get(playing)
        closed = record.with_(status=Status.ABANDONED, version=2)
        await store.commit(closed, [tables._event(closed, EventKind.END, -1, "", time.time(),
                                                  abandoned=True)], 1)
        assert await rate_table(tables, playing) is None
        assert await rate_table(tables, "no-such-table") is None
        assert await store.ratings(PLAYERS_LADDER) == []
    finally:
        await store.close()


# --- the board's order and windows --------------------------------------------------------
@run_async
async def test_the_board_ranks_by_ordinal_and_windows_around_a_player() -> None:
    store = MemoryStore()
    tables = Tables(store)
    # ordinals 30, 20, 20, 10, 0, -10, -20: the two 20s share rank 2, the next is 4th
    ordinals = {"guest:a": 30, "bot:hard": 20, "guest:c": 20, "guest:d": 10, "guest:e": 0,
                "guest:f": -10, "guest:g": -20}

    def update(current: Any) -> list[Rating]:
        return [Rating(PLAYERS_LADDER, GAME, e, o + 3.0, 1.0, 1, 1.0)
                for e, o in ordinals.items()]

    match = RatedMatch(PLAYERS_LADDER, "t1", GAME, ("t1",), tuple(ordinals), 1.0,
                       ranks=tuple(range(1, 8)), names=tuple(e.upper() for e in ordinals))
    assert await store.rate(match, update) is None
    top, total = await leaderboard(tables, GAME, 3)
    assert total == 7
    assert [(s.rank, s.entrant, s.ordinal, s.bot) for s in top] == [
        (1, "guest:a", 30.0, False), (2, "bot:hard", 20.0, True), (2, "guest:c", 20.0, False)]
    assert [s.name for s in top] == ["GUEST:A", "hard", "GUEST:C"]
    middle, _ = await leaderboard(tables, GAME, 3, "guest:d")
    assert [s.entrant for s in middle] == ["guest:c", "guest:d", "guest:e"]
    assert middle[1].rank == 4
    # at either end the window keeps its size, shifted inside the board
    assert [s.entrant for s in (await leaderboard(tables, GAME, 4, "guest:a"))[0]] == [
        "guest:a", "bot:hard", "guest:c", "guest:d"]
    assert [s.entrant for s in (await leaderboard(tables, GAME, 3, "guest:g"))[0]] == [
        "guest:e", "guest:f", "guest:g"]
    assert len((await leaderboard(tables, GAME, 0))[0]) == 7  # 0: the default 20
