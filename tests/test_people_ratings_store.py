"""Rating history and names in every store (memory, a SQLite file, the real Redis): written in
`Store.rate`'s atomic step with the ratings, once however many raters race, trimmed to the
newest points."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from service import rating_history_redis, rating_history_sqlite, store_memory
from service.model import PLAYERS_LADDER, RatedMatch, Rating
from service.rating_history import RatingPoint
from service.store import Store
from service.store_memory import MemoryStore
from service.store_redis import RedisStore
from service.store_sqlite import SQLiteStore
from tests.store_support import REDIS_KINDS, redis_cleanup, redis_kind_url
from tests.support import run_async

GAME = "dou_dizhu"


@pytest.fixture(params=["memory", "sqlite", *REDIS_KINDS])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Store]]:
    """A factory: its stores share one backing (one memory, one SQLite file, one prefix)."""
    if request.param == "memory":
        shared = MemoryStore()
        yield lambda: shared
    elif request.param == "sqlite":
        yield lambda: SQLiteStore(tmp_path / "people.db")
    else:
        url, prefix = redis_kind_url(request, request.param)
        yield lambda: RedisStore(url)
        redis_cleanup(prefix)


def table_match(table_id: str, entrants: Sequence[str], ranks: Sequence[int],
                names: Sequence[str], at: float) -> RatedMatch:
    return RatedMatch(PLAYERS_LADDER, table_id, GAME, (table_id,), tuple(entrants), at,
                      ranks=tuple(ranks), names=tuple(names))


def step(match: RatedMatch, calls: list[int] | None = None) -> Callable[[Any], list[Rating]]:
    """An update moving each entrant's mu by (2 - rank) and its sigma down by 1."""

    def update(current: Any) -> list[Rating]:
        if calls is not None:
            calls.append(1)
        out = []
        for e, rank in zip(match.entrants, match.ranks or [2] * len(match.entrants),
                           strict=True):
            old = current.get(e)
            mu, sigma, n = (old.mu, old.sigma, old.matches) if old else (25.0, 8.0, 0)
            out.append(Rating(match.ladder, match.game, e, mu + 2 - rank, sigma - 1, n + 1,
                              match.rated_at))
        return out

    return update


@run_async
async def test_a_rated_table_adds_a_point_per_entrant_and_their_names(
    make_store: Callable[[], Store],
) -> None:
    store = make_store()
    try:
        first = table_match("t1", ["guest:ann", "bot:hard"], [1, 2], ["Ann", ""], 10.0)
        assert await store.rate(first, step(first)) is None
        second = table_match("t2", ["guest:bob", "guest:ann", "bot:hard"], [1, 1, 3],
                             ["Bob", "Ann B.", ""], 20.0)
        assert await store.rate(second, step(second)) is None
        ann = await store.rating_history(PLAYERS_LADDER, GAME, "guest:ann")
        assert ann == [RatingPoint("t1", 10.0, 26.0, 7.0, 1), RatingPoint("t2", 20.0, 27.0, 6.0, 1)]
        assert ann[1].ordinal == 27.0 - 18.0
        # the points are the ratings after each table: the last is the standing rating
        standing = {r.entrant: r for r in await store.ratings(PLAYERS_LADDER, GAME)}
        assert (standing["guest:ann"].mu, standing["guest:ann"].sigma) == (27.0, 6.0)
        assert await store.rating_history(PLAYERS_LADDER, GAME, "bot:hard") == [
            RatingPoint("t1", 10.0, 25.0, 7.0, 2), RatingPoint("t2", 20.0, 24.0, 6.0, 3)]
        # the newest `limit`, oldest first; other games and ladders have none
        assert await store.rating_history(PLAYERS_LADDER, GAME, "guest:ann", 1) == ann[1:]
        assert await store.rating_history(PLAYERS_LADDER, GAME, "guest:ann", 0) == []
        assert await store.rating_history(PLAYERS_LADDER, "dobro", "guest:ann") == []
        assert await store.rating_history("main", GAME, "guest:ann") == []
        # the latest name each played under; levels and strangers have none
        names = await store.entrant_names(
            PLAYERS_LADDER, ["guest:ann", "guest:bob", "bot:hard", "guest:nobody"])
        assert names == {"guest:ann": "Ann B.", "guest:bob": "Bob"}
        assert await store.entrant_names("main", ["guest:ann"]) == {}
        assert await store.entrant_names(PLAYERS_LADDER, []) == {}
    finally:
        await store.close()


@run_async
async def test_a_ladder_match_adds_no_history(make_store: Callable[[], Store]) -> None:
    store = make_store()
    try:
        match = RatedMatch("main", "m1", GAME, ("t1", "t2"), ("a", "b"), 1.0)
        assert await store.rate(match, step(match)) is None
        assert [r.matches for r in await store.ratings("main")] == [1, 1]
        assert await store.rating_history("main", GAME, "a") == []
        assert await store.entrant_names("main", ["a", "b"]) == {}
    finally:
        await store.close()


@run_async
async def test_racing_raters_add_one_point(make_store: Callable[[], Store]) -> None:
    """Two stores (connections sharing one backing) rate the same table at once: one writes
    its ratings and points; the other gets the stored match and writes nothing."""
    stores = [make_store() for _ in range(2)]
    try:
        same = table_match("t1", ["guest:ann", "bot:easy"], [2, 1], ["Ann", ""], 5.0)
        calls: list[int] = []
        outcomes = await asyncio.gather(*(s.rate(same, step(same, calls)) for s in stores))
        assert sorted(o is None for o in outcomes) == [False, True]
        for s in stores:
            assert [p.table_id for p in await s.rating_history(PLAYERS_LADDER, GAME,
                                                                 "guest:ann")] == ["t1"]
            assert [r.matches for r in await s.ratings(PLAYERS_LADDER, GAME)] == [1, 1]
    finally:
        for s in stores:
            await s.close()


@run_async
async def test_history_keeps_the_newest_points(
    make_store: Callable[[], Store], monkeypatch: pytest.MonkeyPatch,
) -> None:
    for module in (store_memory, rating_history_sqlite, rating_history_redis):
        monkeypatch.setattr(module, "MAX_HISTORY", 3)
    store = make_store()
    try:
        for i in range(5):
            m = table_match(f"t{i}", ["guest:ann", "bot:random"], [1, 2], ["Ann", ""], 100.0 + i)
            assert await store.rate(m, step(m)) is None
        kept = await store.rating_history(PLAYERS_LADDER, GAME, "guest:ann", 100)
        assert [p.table_id for p in kept] == ["t2", "t3", "t4"]
        assert [p.mu for p in kept] == [28.0, 29.0, 30.0]
        # the rating itself counts every table
        assert {r.matches for r in await store.ratings(PLAYERS_LADDER, GAME)} == {5}
    finally:
        await store.close()
