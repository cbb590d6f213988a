"""Pacing through real servers: the pause between deals (ReadyForNextDeal, DEAL_STARTS by every
person ready or by the clock, moves refused meanwhile, one DEAL_STARTS of two Redis replicas)
and the bots' think time at tables with a person (none at tables of bots alone).

Settings are short so that the file stays quick: a 3 s pause, think times of 0.25-0.3 s.
"""

from __future__ import annotations

import asyncio
import math
import random
import statistics
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pexpect
import pytest
from croupier.v1 import croupier_pb2 as pb
from google.protobuf import struct_pb2

from bots.sdk.pace import Pace, format_range, parse_range
from bots.worker import build_parser as worker_parser
from service.config import ServeConfig
from service.server import start
from tests.bot_support import CROUPIER, Proc, bot_seats, child_env, human_seat
from tests.pty_support import PROMPT
from tests.store_support import REDIS_URL, redis_cleanup, redis_prefix
from tests.support import CROUPIER as SUPPORT_CROUPIER
from tests.support import REPO, Client, ServerProcess, bearer, rpc_code, stored_table

pytestmark = pytest.mark.e2e

PAUSE = 3.0
THINK = (0.25, 0.3)


@pytest.fixture(scope="module")
def paced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, Proc]]:
    """A server pausing PAUSE s between deals, and a bot worker with a short think time."""
    tmp = tmp_path_factory.mktemp("pacing")
    server = ServerProcess(
        db=tmp / "c.db",
        extra=("--fill-interval", "0.1", "--deal-pause-seconds", str(PAUSE)),
    ).start()
    think = f"{THINK[0]}-{THINK[1]}"
    bots = Proc(
        "bots",
        [CROUPIER, "bots", "--server", server.address, "--poll", "0.2",
         "--think-seconds", think, "--forced-think-seconds", think],
        tmp / "bots.log",
    )
    try:
        yield server, bots
    finally:
        code = bots.stop()
        server.stop()
    assert code == 0, bots.describe()


@pytest.fixture
def client(paced: tuple[ServerProcess, Proc]) -> Iterator[Client]:
    c = Client(paced[0].address)
    yield c
    c.close()


def options(**values: float) -> struct_pb2.Struct:
    out = struct_pb2.Struct()
    out.update(values)
    return out


def people_table(client: Client, **opts: float) -> str:
    """A Dou Dizhu match of two deals with three people, all seats this client's."""
    table = client.create("dou_dizhu", players=3, options=options(deals=2, **opts))
    for i in range(3):
        client.join(table.table_id, name=f"p{i}")
    return table.table_id


def play_until_pause(client: Client, table_id: str, rng: random.Random) -> pb.SubmitMoveResponse:
    """Random legal moves until one ends the first deal (its answer shows the pause)."""
    for _ in range(1000):
        public = client.view(table_id)
        assert public.to_act, "the match ended without a pause"
        seat = public.to_act[0]
        mine = client.view(table_id, seat)
        reply = client.move(table_id, seat, rng.choice(mine.legal_moves), mine.version)
        if reply.view.next_deal_at:
            return reply
    raise AssertionError("no deal ended in 1000 moves")


def ready(client: Client, table_id: str, seat: int | None) -> pb.ReadyForNextDealResponse:
    md = bearer(client.tokens[seat]) if seat is not None else None
    return client.stub.ReadyForNextDeal(
        pb.ReadyForNextDealRequest(table_id=table_id), metadata=md, timeout=10
    )


def events(client: Client, table_id: str, until: int, timeout: float = 20) -> list[pb.TableEvent]:
    """The table's events as a spectator, from the start up to the first of kind `until`."""
    out: list[pb.TableEvent] = []
    stream = client.stream(table_id, timeout=timeout)
    for event in stream:
        out.append(event)
        if event.kind in (until, pb.EVENT_KIND_END):
            break
    stream.cancel()
    return out


def test_pause_holds_refuses_moves_and_ends_when_everyone_is_ready(
    paced: tuple[ServerProcess, Proc], client: Client
) -> None:
    server = paced[0]
    table_id = people_table(client, turn_seconds=60)
    reply = play_until_pause(client, table_id, random.Random(1))
    now = time.time()
    view = reply.view
    assert now < view.next_deal_at <= now + PAUSE + 0.5
    assert not view.to_act and not view.legal_moves and not view.on_turn and not view.deadline
    assert list(view.ready_seats) == []

    # a move in the pause: refused, saying when the deal starts; nothing changes
    before = stored_table(server.db, table_id)
    for seat in range(3):
        code, details = rpc_code(client.move, table_id, seat, "pass", reply.version)
        assert code == grpc.StatusCode.FAILED_PRECONDITION
        assert "the next deal starts in" in details and " s" in details
    assert stored_table(server.db, table_id) == before

    # everyone ready: each one a READY event (once), the last one DEAL_STARTS
    first = ready(client, table_id, 0)
    assert first.version == reply.version + 1
    assert list(first.view.ready_seats) == [0] and first.view.next_deal_at
    again = ready(client, table_id, 0)
    assert again.version == first.version  # ready already: nothing changed
    assert list(ready(client, table_id, 2).view.ready_seats) == [0, 2]
    last = ready(client, table_id, 1)
    assert last.view.next_deal_at == 0 and not last.view.ready_seats
    assert last.view.to_act
    log = events(client, table_id, pb.EVENT_KIND_DEAL_STARTS)
    kinds = [e.kind for e in log[-4:]]
    assert kinds == [pb.EVENT_KIND_MOVE, pb.EVENT_KIND_READY, pb.EVENT_KIND_READY,
                     pb.EVENT_KIND_DEAL_STARTS]
    assert log[-4].deal_over and log[-4].view.next_deal_at
    starts = log[-1]
    assert starts.version == last.version and starts.time - log[-4].time < PAUSE
    assert starts.view.to_act and not starts.view.next_deal_at

    # the first mover's timer counts from the pause's end, not from the deal's end
    mover = starts.view.to_act[0]
    mine = client.view(table_id, mover)
    assert mine.deadline == pytest.approx(starts.time + 60, abs=0.01)
    # the next deal is played
    assert client.move(table_id, mover, mine.legal_moves[0], mine.version).version == last.version + 1
    assert [e.kind for e in events(client, table_id, pb.EVENT_KIND_DEAL_STARTS)].count(
        pb.EVENT_KIND_DEAL_STARTS) == 1


def test_ready_outside_a_pause_or_without_a_seat_is_refused(
    paced: tuple[ServerProcess, Proc], client: Client
) -> None:
    server = paced[0]
    table_id = people_table(client)
    before = stored_table(server.db, table_id)
    code, details = rpc_code(ready, client, table_id, 0)
    assert code == grpc.StatusCode.FAILED_PRECONDITION and "not in a pause" in details
    code, details = rpc_code(ready, client, table_id, None)
    assert code == grpc.StatusCode.UNAUTHENTICATED
    other = Client(server.address)
    try:
        other_id = people_table(other)
        code, details = rpc_code(
            client.stub.ReadyForNextDeal, pb.ReadyForNextDealRequest(table_id=table_id),
            metadata=bearer(other.tokens[0]), timeout=10)
        assert code == grpc.StatusCode.PERMISSION_DENIED
        code, details = rpc_code(ready, other, "", 0)
        assert code == grpc.StatusCode.INVALID_ARGUMENT and "table_id" in details
        code, details = rpc_code(ready, other, "no-such-table", 0)
        assert code == grpc.StatusCode.NOT_FOUND and "no-such-table" in details
        assert other_id != table_id
    finally:
        other.close()
    assert stored_table(server.db, table_id) == before


def test_the_clock_ends_the_pause(paced: tuple[ServerProcess, Proc], client: Client) -> None:
    table_id = people_table(client)
    reply = play_until_pause(client, table_id, random.Random(2))
    ready(client, table_id, 1)  # one of three: the pause goes on
    log = events(client, table_id, pb.EVENT_KIND_DEAL_STARTS, timeout=PAUSE + 10)
    assert log[-1].kind == pb.EVENT_KIND_DEAL_STARTS
    over = next(e for e in log if e.version == reply.version)
    assert over.deal_over
    assert log[-2].kind == pb.EVENT_KIND_READY and list(log[-2].view.ready_seats) == [1]
    waited = log[-1].time - over.time
    assert PAUSE - 0.05 <= waited < PAUSE + 2
    assert log[-1].view.to_act and not log[-1].view.next_deal_at
    assert [e.kind for e in log].count(pb.EVENT_KIND_DEAL_STARTS) == 1
    public = client.view(table_id)
    seat = public.to_act[0]
    mine = client.view(table_id, seat)
    client.move(table_id, seat, mine.legal_moves[0], mine.version)


def bot_gaps(log: list[pb.TableEvent], bots: set[int]) -> list[float]:
    """Seconds from each event to the bot move that follows it."""
    return [
        e.time - prev.time
        for prev, e in zip(log, log[1:], strict=False)
        if e.kind == pb.EVENT_KIND_MOVE and e.seat in bots
    ]


def test_bots_think_at_a_table_with_a_person_and_carry_on_after_the_pause(
    paced: tuple[ServerProcess, Proc], client: Client
) -> None:
    """One person and three bots: each bot move comes THINK after the event before it; at the
    deal's end the bots wait for DEAL_STARTS (no refused move) and then play on. Meanwhile the
    same worker plays a table of bots alone at full speed: its waits block nothing."""
    server, bots = paced
    table = client.create(
        "sobe_e_desce", players=4, seats=[human_seat(), *bot_seats(3)],
        options=options(max_deals=2),
    )
    client.join(table.table_id, name="person", seat=0)
    beside: list[pb.TableEvent] = []
    other = Client(server.address)

    def bots_alone() -> None:
        alone = other.create("sobe_e_desce", players=4, seats=bot_seats(4),
                             options=options(max_deals=1))
        beside.extend(events(other, alone.table_id, pb.EVENT_KIND_END, timeout=60))

    watcher = threading.Thread(target=bots_alone)
    watcher.start()
    rng = random.Random(3)
    log: list[pb.TableEvent] = []
    paused = False
    started_after: list[pb.TableEvent] = []
    stream = client.stream(table.table_id, seat=0, timeout=60)
    for event in stream:
        log.append(event)
        if event.kind == pb.EVENT_KIND_MOVE and event.view.next_deal_at:
            paused = True
        if event.kind == pb.EVENT_KIND_DEAL_STARTS:
            assert paused
            started_after.append(event)
        if started_after and event.kind == pb.EVENT_KIND_MOVE and event.seat != 0:
            break  # a bot played the next deal
        if event.kind == pb.EVENT_KIND_END:
            break
        view = event.view
        if 0 in view.to_act and view.legal_moves and event.version == view.version:
            try:
                client.move(table.table_id, 0, rng.choice(view.legal_moves), view.version)
            except grpc.RpcError as error:  # a newer event is on its way
                assert error.code() == grpc.StatusCode.ABORTED
    stream.cancel()
    client.stub.LeaveTable(pb.LeaveTableRequest(table_id=table.table_id),
                           metadata=bearer(client.tokens[0]), timeout=10)
    assert started_after, "no DEAL_STARTS"
    over = next(e for e in log if e.deal_over)
    assert started_after[0].time - over.time >= PAUSE - 0.05
    gaps = bot_gaps(log, {1, 2, 3})
    assert len(gaps) >= 10
    assert min(gaps) >= THINK[0] - 0.02, gaps
    assert "move_refused" not in bots.log.read_text()
    watcher.join(60)
    other.close()
    assert beside and beside[-1].kind == pb.EVENT_KIND_END
    assert statistics.median(bot_gaps(beside, {0, 1, 2, 3})) < THINK[0] / 2
    assert beside[-1].time < log[-1].time  # while the person's table was being played


def test_bots_alone_neither_think_nor_pause(
    paced: tuple[ServerProcess, Proc], client: Client
) -> None:
    table = client.create("sobe_e_desce", players=4, seats=bot_seats(4),
                          options=options(max_deals=2))
    log = events(client, table.table_id, pb.EVENT_KIND_END, timeout=60)
    assert log[-1].kind == pb.EVENT_KIND_END
    kinds = [e.kind for e in log]
    assert pb.EVENT_KIND_DEAL_STARTS not in kinds and pb.EVENT_KIND_READY not in kinds
    assert sum(e.deal_over for e in log) == 2
    assert not any(e.view.next_deal_at for e in log)
    gaps = bot_gaps(log, {0, 1, 2, 3})
    assert len(gaps) >= 40
    # a bot with think time would wait THINK[0] at least for every move
    assert statistics.median(gaps) < THINK[0] / 2, gaps
    over = [i for i, e in enumerate(log) if e.deal_over][0]
    assert log[over + 1].time - log[over].time < THINK[0]  # the next deal at once


def test_two_replicas_on_redis_start_the_next_deal_once(tmp_path: Path) -> None:
    prefix = redis_prefix()
    url = f"{REDIS_URL}?prefix={prefix}"
    servers = [
        ServerProcess(db=tmp_path / f"{name}.db", store=url,
                      extra=("--fill-interval", "0.05", "--deal-pause-seconds", "0.5")).start()
        for name in ("a", "b")
    ]
    # per table: its people through replica a, a second client (the same tokens) on b
    pairs = [(Client(servers[0].address), Client(servers[1].address)) for _ in range(3)]
    clients = [c for pair in pairs for c in pair]
    try:
        tables = [people_table(a) for a, _ in pairs]
        replies: dict[str, pb.SubmitMoveResponse] = {}

        def play(table_id: str, player: Client, seed: int) -> None:
            replies[table_id] = play_until_pause(player, table_id, random.Random(seed))

        threads = [threading.Thread(target=play, args=(t, pair[0], i))
                   for i, (t, pair) in enumerate(zip(tables, pairs, strict=True))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert len(replies) == 3
        time.sleep(1.5)  # both replicas' clocks have had many rounds past the pause
        for table_id, (a, b) in zip(tables, pairs, strict=True):
            log = []
            stream = b.stream(table_id, timeout=10)
            for event in stream:
                log.append(event)
                if event.version == replies[table_id].version + 1:
                    break
            stream.cancel()
            assert log[-1].kind == pb.EVENT_KIND_DEAL_STARTS
            view = b.view(table_id)
            assert view.version == log[-1].version  # nothing after it: no second DEAL_STARTS
            assert view.to_act and not view.next_deal_at
            # the next deal is played through the other replica
            b.tokens = dict(a.tokens)
            seat = view.to_act[0]
            mine = b.view(table_id, seat)
            b.move(table_id, seat, mine.legal_moves[0], mine.version)
    finally:
        for c in clients:
            c.close()
        for s in servers:
            s.stop()
        redis_cleanup(prefix)


def _view(people: int, bots: int, legal: int, deadline: float = 0.0) -> pb.TableView:
    seats = [pb.SeatInfo(seat=i, occupied=True) for i in range(people)]
    seats += [pb.SeatInfo(seat=people + i, occupied=True, is_bot=True) for i in range(bots)]
    view = pb.TableView(legal_moves=[f"m{i}" for i in range(legal)], deadline=deadline)
    view.table.seats.extend(seats)
    return view


def test_think_time_is_drawn_from_its_range_and_cut_before_the_deadline() -> None:
    pace = Pace(think=(0.8, 2.0), forced=(0.3, 0.6))
    rng = random.Random(5)
    waits = [pace.wait(_view(1, 2, 5), 0.0, rng) for _ in range(200)]
    assert min(waits) >= 0.8 and max(waits) <= 2.0 and max(waits) - min(waits) > 0.8
    assert all(0.3 <= pace.wait(_view(1, 2, 1), 0.0, rng) <= 0.6 for _ in range(50))
    # the decision's own time counts; a table of bots alone never waits; nor does "0"
    assert all(pace.wait(_view(1, 2, 5), 1.9, rng) <= 0.1 for _ in range(50))
    assert pace.wait(_view(0, 3, 5), 0.0, rng) == 0.0
    assert Pace(parse_range("0"), parse_range("0")).wait(_view(1, 2, 5), 0.0, rng) == 0.0
    # never into the turn deadline
    now = 1000.0
    assert pace.wait(_view(1, 2, 5, deadline=now + 1.0), 0.0, rng, now=now) == pytest.approx(0.5)
    assert pace.wait(_view(1, 2, 5, deadline=now + 0.2), 0.0, rng, now=now) == 0.0


def test_think_time_settings_are_checked() -> None:
    assert parse_range("0.8-2") == (0.8, 2.0) and parse_range("1.5") == (1.5, 1.5)
    assert format_range((0.8, 2.0)) == "0.8-2" and format_range((0.0, 0.0)) == "0"
    for bad in ("2-1", "-1", "a-b", "1-2-3", "90"):
        with pytest.raises(ValueError, match="think time"):
            parse_range(bad)
    assert worker_parser().parse_args(["--think-seconds", "0.1-0.2"]).think_seconds == (0.1, 0.2)
    with pytest.raises(SystemExit):
        worker_parser().parse_args(["--forced-think-seconds", "soon"])


def test_a_bad_deal_pause_stops_the_server_with_a_clear_error() -> None:
    out = subprocess.run(
        [*SUPPORT_CROUPIER, "serve", "--listen", "127.0.0.1:0", "--store", "memory",
         "--deal-pause-seconds", "-1"],
        capture_output=True, text=True, timeout=60, cwd=REPO,
    )
    assert out.returncode == 1
    assert "--deal-pause-seconds must be 0 or more seconds" in out.stdout + out.stderr
    for value in (math.nan, math.inf):
        with pytest.raises(ValueError, match="--deal-pause-seconds must be 0 or more"):
            asyncio.run(start(ServeConfig(listen="127.0.0.1:0", store="memory",
                                          deal_pause_seconds=value)))


def test_enter_in_the_terminal_starts_the_next_deal(
    paced: tuple[ServerProcess, Proc], client: Client, tmp_path: Path
) -> None:
    """`croupier play` against bots: at the deal's end it says how to start the next deal, and
    Enter does it before the pause runs out."""
    server = paced[0]
    child = pexpect.spawn(
        CROUPIER, ["play", "sobe_e_desce", "--server", server.address, "--name", "tester",
                   "--bots", "random", "--option", "max_deals=2"],
        cwd=str(REPO), env=child_env(NO_COLOR="1", TERM="xterm"), encoding="utf-8",
        timeout=30, dimensions=(50, 120),
    )
    with (tmp_path / "play.txt").open("w") as log:
        child.logfile_read = log
        try:
            child.expect(r"table ([0-9a-f]{16}), you are seat")
            table_id = child.match.group(1)
            while child.expect([PROMPT, r"press Enter to start it now"]) == 0:
                child.sendline("#1")
            child.sendline("")
            child.expect("Ready for the next deal.")
            child.expect("The next deal starts.")
            child.sendline("quit")
            child.expect(pexpect.EOF)
        finally:
            child.close()
    log_ = events(client, table_id, pb.EVENT_KIND_DEAL_STARTS)
    over = next(e for e in log_ if e.deal_over)
    assert log_[-1].kind == pb.EVENT_KIND_DEAL_STARTS
    assert log_[-1].time - over.time < PAUSE  # Enter ended it, not the clock
