"""Matchmaking over two real server replicas sharing one Redis (a key prefix of its own): 200
players calling FindMatch at once are each seated exactly once, and a replica killed while
matching loses no ticket."""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import pytest
from croupier.v1 import croupier_pb2 as pb

from service.model import Status, TableFilter, TableRecord
from service.store_redis import RedisStore
from tests.matchmaking_support import find, wait_matched
from tests.players_support import guest
from tests.store_support import REDIS_URL, redis_cleanup, redis_prefix
from tests.support import Client, ServerProcess

MATCH_FLAGS = ("--fill-interval", "0.2", "--match-interval", "0.1",
               "--match-bots-after", "2")


class Pair:
    def __init__(self, tmp: Path) -> None:
        self.prefix = redis_prefix()
        self.url = f"{REDIS_URL}?prefix={self.prefix}"
        self.servers = [
            ServerProcess(db=tmp / f"replica{i}.db", store=self.url, extra=MATCH_FLAGS).start()
            for i in range(2)
        ]
        self.clients = [Client(s.address) for s in self.servers]

    def close(self) -> None:
        for c in self.clients:
            c.close()
        for s in self.servers:
            if s.proc is not None and s.proc.poll() is None:
                s.stop()
        redis_cleanup(self.prefix)

    def tables(self) -> list[TableRecord]:
        async def go() -> list[TableRecord]:
            store = RedisStore(self.url)
            try:
                return await store.list(TableFilter(limit=100_000))
            finally:
                await store.close()

        return asyncio.run(go())


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    """Two replicas for the module; the last test kills one."""
    p = Pair(tmp_path_factory.mktemp("mm_replicas"))
    yield p
    p.close()


def _crowd(pair: Pair, count: int, game: str, players: int) -> list[tuple[str, str, pb.Ticket]]:
    """`count` guests, made and calling FindMatch at once, split over both replicas."""
    def one(i: int) -> tuple[str, str, pb.Ticket]:
        client = pair.clients[i % 2]
        player_id, token = guest(client, f"p{i}")
        return player_id, token, find(client, token, game, players=players)

    with ThreadPoolExecutor(32) as pool:
        return list(pool.map(one, range(count)))


def _check_seating(pair: Pair, seated: dict[str, pb.Ticket], size: int) -> int:
    """Every player at exactly one matched table, on the seat their ticket says, and no table
    over its size nor with a player twice. Returns how many tables no ticket was matched to
    were left open (made by a replica killed before its claim: the abandonment round's)."""
    matched = {t.table_id for t in seated.values()}
    game = next(iter(seated.values())).game
    open_ = [t for t in pair.tables() if t.status != Status.ABANDONED and t.game == game]
    live = [t for t in open_ if t.table_id in matched]
    by_table = {t.table_id: t for t in live}
    places: Counter[str] = Counter()
    for record in live:
        owners = [s.player for s in record.seats if s.player]
        assert len(record.seats) == size
        assert len(owners) == len(set(owners)), f"a player twice at {record.table_id}"
        places.update(owners)
    assert set(places) == set(seated)
    assert all(n == 1 for n in places.values()), "a player seated twice"
    for player_id, ticket in seated.items():
        assert by_table[ticket.table_id].seats[ticket.seat].player == player_id
    return len(open_) - len(live)


def test_200_players_at_once_over_two_replicas(pair: Pair) -> None:
    crowd = _crowd(pair, 200, "dou_dizhu", 3)
    assert len({t.ticket_id for _, _, t in crowd}) == 200

    def matched(i: int) -> tuple[str, pb.Ticket]:
        player_id, token, ticket = crowd[i]
        return player_id, wait_matched(pair.clients[(i + 1) % 2], token, ticket.ticket_id, 30)

    with ThreadPoolExecutor(32) as pool:
        seated = dict(pool.map(matched, range(200)))
    # a claim that lost closed its table at once: none is left open
    assert _check_seating(pair, seated, 3) == 0
    # 66 full tables and one with bots for the 2 left over (after the 2 s wait)
    assert len({t.table_id for t in seated.values()}) == 67


def test_a_replica_killed_while_matching_loses_no_ticket(pair: Pair) -> None:
    """The players call FindMatch through the first replica, which is killed (SIGKILL) while
    the calls come and its matcher groups them; those refused call the other replica with the
    same request (answered with their ticket if it was opened), which seats every ticket."""
    first, survivor = pair.clients
    people = [guest(survivor, f"k{i}") for i in range(100)]

    lock = threading.Lock()
    through_first: list[int] = []

    def one(i: int) -> tuple[str, str, pb.Ticket]:
        player_id, token = people[i]
        try:
            ticket = find(first, token, "dos", players=2)
        except grpc.RpcError:
            return player_id, token, find(survivor, token, "dos", players=2)
        with lock:
            through_first.append(i)
            if len(through_first) == 30:  # the replica dies with calls in flight
                pair.servers[0].kill()
        return player_id, token, ticket

    with ThreadPoolExecutor(8) as pool:
        crowd = list(pool.map(one, range(100)))
    assert 30 <= len(through_first) < 100

    def matched(i: int) -> tuple[str, pb.Ticket]:
        player_id, token, ticket = crowd[i]
        return player_id, wait_matched(survivor, token, ticket.ticket_id, 30)

    with ThreadPoolExecutor(16) as pool:
        seated = dict(pool.map(matched, range(100)))
    assert _check_seating(pair, seated, 2) <= 1  # at most the killed replica's last one
