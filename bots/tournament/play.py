"""Plays a tournament's matches through the service, as any client would.

For each match: CreateTable with every seat reserved for its entrant (a built-in level's bot,
or an outside entrant's program), then StreamTable (as a spectator) until the END event, whose
view carries the result; then the table's record from ExportRecord, whose moves give each
seat's statistics. Running bot workers (`croupier bots`) and the outside entrants' programs
do the playing. Up to
`parallel` tables are in flight at once; each result is written to the result file the moment
it arrives.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import grpc
from croupier.v1 import croupier_pb2 as pb
from croupier.v1 import croupier_pb2_grpc as pb_grpc
from google.protobuf import json_format, struct_pb2

from bots import records
from bots.tournament import stats
from bots.tournament.entrants import seat_entrant, seat_spec
from bots.tournament.results import ResultFile
from bots.tournament.schedule import Match, deal_options
from engines.contract import public_options
from engines.registry import get_game

RETRY = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})
T = TypeVar("T")
STREAM_SECONDS = 3600.0
STREAM_ATTEMPTS = 30
ADOPT_LOOKS, ADOPT_PAUSE = 3, 1.0  # looks for a begun match's table on restart, seconds apart
ADOPT_PAGES = 4  # each look reads the game's newest 2,000 tables at most (500 a page)


class TournamentError(Exception):
    """The service refused something the tournament cannot work around (bad game or options)."""


async def retrying(call: Callable[[], Awaitable[T]], attempts: int = 8) -> T:
    """A unary call retried with backoff while the server is unreachable or restarting."""
    delay = 0.2
    for attempt in range(attempts):
        try:
            return await call()
        except grpc.aio.AioRpcError as e:
            if e.code() not in RETRY or attempt == attempts - 1:
                raise
        await asyncio.sleep(delay)
        delay = min(delay * 2, 5.0)
    raise AssertionError("unreachable")


class Runner:
    def __init__(self, stub: pb_grpc.CroupierStub, results: ResultFile, meta: dict[str, Any],
                 records_dir: Path, parallel: int = 4,
                 on_done: Callable[[Match], None] = lambda m: None,
                 on_move: Callable[[], None] = lambda: None) -> None:
        self.stub = stub
        self.results = results
        self.meta = meta
        self.records_dir = records_dir
        self.parallel = max(1, parallel)
        self.on_done = on_done
        self.on_move = on_move  # every move seen on a followed table (progress)

    def _request(self, match: Match) -> pb.CreateTableRequest:
        m = self.meta
        request = pb.CreateTableRequest(
            game=m["game"], players=m["players"],
            seats=[seat_spec(name) for name in match.seating],
        )
        options = {**m["options"], **time_options(m)}
        # the tables of one deal are found again by their label after a restart: the run's
        # public random name (a ladder's names its match too), never derived from the seed
        prefix = m.get("label") or (f"t-{m['run']}" if m.get("run") else "")
        if prefix:
            options["label"] = f"{prefix}-deal-{match.deal}"
        request.options.update(
            deal_options(m["game"], m["players"], options, m["seed"], match.deal)
        )
        return request

    async def _adopt(self, match: Match) -> str:
        """A table this match created before a kill cut off storing its id: found among the
        server's newest tables (2,000 at most) by its options as tables show them (the deck
        left out; the label names the run and the deal) and its seats' entrants. '' when none
        is found (then the match is played on a new table)."""
        request = self._request(match)
        shown = struct_pb2.Struct()
        shown.update(public_options(get_game(request.game).info.options,
                                    json_format.MessageToDict(request.options)))
        known = self.results.known_tables()
        for attempt in range(ADOPT_LOOKS):
            if attempt:  # the killed run's request may still be landing: a server finishes
                await asyncio.sleep(ADOPT_PAUSE)  # a creation whose caller is gone
            token = ""
            for _ in range(ADOPT_PAGES):
                page = pb.ListTablesRequest(game=request.game, limit=500, page_token=token)
                listing = await retrying(functools.partial(self.stub.ListTables, page,
                                                            timeout=30))
                for table in listing.tables:
                    if (
                        table.table_id not in known
                        and table.options == shown
                        and [seat_entrant(s) for s in table.seats] == list(match.seating)
                    ):
                        self.results.started(match, table.table_id)
                        return table.table_id
                token = listing.next_page_token
                if not token:
                    break
        return ""

    async def _create(self, match: Match) -> str:
        request = self._request(match)
        self.results.started(match, "")  # begun: a restart looks for the table first
        try:
            table = await retrying(lambda: self.stub.CreateTable(request, timeout=30))
        except grpc.aio.AioRpcError as e:
            if e.code() in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.RESOURCE_EXHAUSTED):
                raise TournamentError(f"the server refused the table: {e.details()}") from None
            raise
        self.results.started(match, table.table_id)
        return table.table_id

    async def _follow(self, table_id: str) -> pb.TableEvent:
        """The table's END event, resuming the stream where it broke off (giving up after
        STREAM_ATTEMPTS failures in a row: the server is gone, not restarting)."""
        last = 0
        delay = 0.2
        failures = 0
        while True:
            try:
                stream = self.stub.StreamTable(
                    pb.StreamTableRequest(table_id=table_id, from_version=last),
                    timeout=STREAM_SECONDS,
                )
                async for event in stream:
                    last = event.version
                    failures, delay = 0, 0.2
                    if event.kind == pb.EVENT_KIND_MOVE:
                        self.on_move()
                    if event.kind == pb.EVENT_KIND_END:
                        return event
            except grpc.aio.AioRpcError as e:
                if e.code() not in RETRY:
                    raise
            failures += 1
            if failures >= STREAM_ATTEMPTS:
                raise TournamentError(
                    f"the stream of table {table_id} broke off {failures} times in a row "
                    f"(last version seen {last}); results so far are kept: run again to resume"
                )
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)

    async def play(self, match: Match) -> None:
        table_id = self.results.table_of(match)
        if table_id == "":
            table_id = await self._adopt(match)
        end: pb.TableEvent | None = None
        if table_id:  # created before a restart: follow it, do not play the deal again
            try:
                end = await self._follow(table_id)
            except grpc.aio.AioRpcError as e:
                if e.code() != grpc.StatusCode.NOT_FOUND:
                    raise
                table_id = ""  # the server lost it (memory store, expired): play it afresh
        if not table_id:
            table_id = await self._create(match)
            end = await self._follow(table_id)
        assert end is not None
        result = end.view.result
        record = await retrying(
            lambda: self.stub.ExportRecord(pb.ExportRecordRequest(table_id=table_id), timeout=30)
        )
        records.save(record, self.records_dir / record_name(match))
        self.results.finished(match, table_id, result.totals, result.winners, time.time(),
                              stats.of_record(record))
        self.on_done(match)

    async def run(self, matches: list[Match]) -> None:
        queue: asyncio.Queue[Match] = asyncio.Queue()
        for match in matches:
            queue.put_nowait(match)

        async def worker() -> None:
            while True:
                try:
                    match = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                await self.play(match)

        tasks = [asyncio.create_task(worker()) for _ in range(min(self.parallel, len(matches)))]
        try:
            await asyncio.gather(*tasks)
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


def time_options(meta: dict[str, Any]) -> dict[str, Any]:
    """The table options of the tournament's time control (--move-seconds, --match-seconds)."""
    out: dict[str, Any] = {}
    if meta.get("move_seconds"):
        out["turn_seconds"] = meta["move_seconds"]
    if meta.get("match_seconds"):
        out["match_seconds"] = meta["match_seconds"]
    return out


def record_name(match: Match) -> str:
    """deal-DDDDD-<entrants by seat>.json. Names hold no ':' or '/' (the name rule) but may
    hold '-': then '+' separates the seats, or two seatings could share a file name."""
    sep = "+" if any("-" in name for name in match.seating) else "-"
    return f"deal-{match.deal:05d}-{sep.join(match.seating)}.json"


def deals_left(matches: list[Match]) -> Counter[int]:
    """Matches still to play per deal: a deal is done when its count reaches zero."""
    return Counter(m.deal for m in matches)
