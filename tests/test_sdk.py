"""The bot SDK against a real server process: trivial bots play every game to the end, bad
answers are replaced by legal moves saying why, seat tokens never reach the bot, and a stop
gives the seats back.

The runner runs on an event loop of its own in a thread of the test process (so the test can
read what its bots were given, and the runner's own records of its seats for the tokens).
"""

from __future__ import annotations

import asyncio
import math
import random
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog
from croupier.v1 import croupier_pb2 as pb
from croupier.v1 import croupier_pb2_grpc as pb_grpc
from google.protobuf.message import Message

from bots import sdk
from bots.sdk.runner import Runner, RunnerSettings
from bots.sdk.seat import SeatPlayer
from tests.bot_support import create_table, events_to_end, wait_until
from tests.seat_player_support import SEAT, ScriptedStub, view
from tests.support import Client, ServerProcess

pytestmark = pytest.mark.e2e

GAMES = {"dou_dizhu": 3, "doppelkopf": 4, "dobro": 3, "dos": 2, "sobe_e_desce": 4}
ENTRANT = "sdk-bot"  # the outside entrant the SDK bots of these tests play as
KEY = "sdk-bot-key-0123456789abcdef"


@pytest.fixture(scope="module")
def sdk_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server of this module's own: no other test's waiting table gets in the way."""
    proc = ServerProcess(db=tmp_path_factory.mktemp("sdk") / "c.db").start()
    yield proc
    proc.stop()


@pytest.fixture
def sdk_client(sdk_server: ServerProcess) -> Iterator[Client]:
    c = Client(sdk_server.address)
    yield c
    c.close()


class Running:
    """A coroutine of the SDK on its own loop in a thread; `finish` stops it and waits."""

    def __init__(self, start: Callable[[asyncio.Event], Coroutine[Any, Any, Any]]) -> None:
        self.loop = asyncio.new_event_loop()
        self.stop = asyncio.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._main, args=(start,), daemon=True)
        self.thread.start()

    def _main(self, start: Callable[[asyncio.Event], Coroutine[Any, Any, Any]]) -> None:
        try:
            self.loop.run_until_complete(start(self.stop))
        except BaseException as e:  # noqa: BLE001 - reported by finish()
            self.error = e

    def finish(self, timeout: float = 60.0) -> None:
        self.loop.call_soon_threadsafe(self.stop.set)
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the runner did not stop"
        self.loop.close()
        if self.error is not None:
            raise self.error


def run_runner(runner: Runner) -> Running:
    return Running(lambda stop: runner.run(stop=stop, signals=False))


def settings(server: ServerProcess, **kw: Any) -> RunnerSettings:
    return RunnerSettings(server=server.address, entrant=ENTRANT, poll=0.1, **kw)


def bot_seats(n: int, entrant: str = ENTRANT) -> list[pb.SeatSpec]:
    return [pb.SeatSpec(kind=pb.SEAT_KIND_BOT, entrant=entrant) for _ in range(n)]


class Trivial(sdk.Bot):
    """A random legal move, on the loop."""

    blocking = False

    def choose(self, view: pb.TableView, legal_moves: list[str], time_left: float) -> str:
        return random.choice(legal_moves)


def finished(stub: pb_grpc.CroupierStub, table_id: str) -> pb.TableView:
    events = events_to_end(stub, table_id, timeout=120)
    assert events[-1].kind == pb.EVENT_KIND_END
    assert events[-1].view.result.finished
    return events[-1].view


def record(client: Client, table_id: str) -> pb.GameRecord:
    return client.stub.ExportRecord(pb.ExportRecordRequest(table_id=table_id), timeout=10)


def test_a_trivial_bot_plays_a_table_of_each_game_to_the_end(
    sdk_server: ServerProcess, sdk_client: Client
) -> None:
    running = Running(lambda stop: sdk.serve(Trivial, sdk_server.address, ENTRANT, poll=0.1,
                                             stop=stop))
    try:
        tables = {game: create_table(sdk_client.stub, bot_seats(n), game=game)
                  for game, n in GAMES.items()}
        for game, table_id in tables.items():
            view = finished(sdk_client.stub, table_id)
            assert len(view.result.totals) == GAMES[game]
            assert all(s.is_bot and s.occupied for s in view.table.seats), game
    finally:
        running.finish()


class Bad(sdk.Bot):
    """Answers badly in one way; `blocking` as given."""

    def __init__(self, answer: Callable[[list[str]], Any], blocking: bool = False) -> None:
        self.answer = answer
        self.blocking = blocking

    def choose(self, view: pb.TableView, legal_moves: list[str], time_left: float) -> Any:
        return self.answer(legal_moves)


def crash(legal: list[str]) -> str:
    raise RuntimeError(f"a bug quoting the hand {' '.join(legal)}")


@pytest.mark.parametrize(
    ("answer", "fallback", "blocking", "rejected"),
    [
        (crash, "crashed", False, ""),
        (crash, "crashed", True, ""),
        (lambda legal: 42, "garbage", False, "42"),
        (lambda legal: "", "garbage", True, "''"),
        (lambda legal: "not a move", "illegal", False, "not a move"),
    ],
    ids=["crash", "crash-in-thread", "not-a-string", "empty", "illegal"],
)
def test_bad_answers_are_replaced_by_legal_moves_saying_why(
    sdk_server: ServerProcess, sdk_client: Client, answer: Callable[[list[str]], Any],
    fallback: str, blocking: bool, rejected: str,
) -> None:
    bot = Bad(answer, blocking)
    with structlog.testing.capture_logs() as logs:
        running = run_runner(Runner(bot, settings(sdk_server)))
        try:
            table_id = create_table(sdk_client.stub, bot_seats(3))
            finished(sdk_client.stub, table_id)
        finally:
            running.finish()
    decided = [e for e in logs if e["event"] == "decision" and e.get("table") == table_id]
    moves = list(record(sdk_client, table_id).moves)
    assert decided and len(decided) == len(moves)
    assert all(e.get("fallback") == fallback for e in decided), decided[:3]
    # the server recorded each stand-in with its reason (what tournaments count)
    assert all(m.fallback == fallback and not m.auto for m in moves)
    # ... and, where the bot gave one, its refused answer (for its author, in the record)
    assert all(m.rejected == rejected for m in moves), moves[0]
    # the stand-ins were logged by their reason and where, never by the message or the cards
    said = [e for e in logs if e["event"] in ("decision_failed", "decision_fallback")]
    assert said and all(e["fallback"] == fallback for e in said)
    assert not any("quoting" in repr(e) for e in logs)
    if fallback == "crashed":
        assert all(e["error"] == "RuntimeError" and any("in crash" in w for w in e["where"])
                   for e in said)


class Recorder(sdk.Bot):
    """Records every argument of every hook, serialized, in `given` (shared by its instances)."""

    blocking = True
    given: list[bytes] = []
    calls: Counter[str] = Counter()
    time_left: set[float] = set()

    def _keep(self, *args: Any) -> None:
        self.calls[sys._getframe(1).f_code.co_name] += 1
        for arg in args:
            if isinstance(arg, Message):
                self.given.append(arg.SerializeToString())
                self.given.append(str(arg).encode())
            else:  # SeatContext (a dataclass), the legal moves, time_left, the bot's own state
                self.given.append(repr(arg).encode())

    def choose(self, view: pb.TableView, legal_moves: list[str], time_left: float) -> str:
        self._keep(view, legal_moves, time_left, self.__dict__)
        self.time_left.add(time_left)
        return random.choice(legal_moves)

    def on_seat(self, seat: sdk.SeatContext) -> None:
        self._keep(seat, self.__dict__)

    def on_event(self, seat: sdk.SeatContext, event: pb.TableEvent) -> None:
        self._keep(seat, event)

    def on_match_end(self, seat: sdk.SeatContext, view: pb.TableView) -> None:
        self._keep(seat, view)

    def on_leave(self, seat: sdk.SeatContext) -> None:
        self._keep(seat)

    def default_move(self, view: pb.TableView, legal_moves: list[str]) -> str:
        self._keep(view, legal_moves)
        return legal_moves[0]

    async def close(self) -> None:
        self._keep()


class TokenWatch(Runner):
    """A runner that notes its seats' tokens as it claims them (read from its internals, for
    this check only: nothing public shows them)."""

    tokens: list[str]

    async def _claim(self, stub: Any, table: pb.Table, seat: int) -> bool:
        claimed = await super()._claim(stub, table, seat)
        for player in self._seats.values():
            self.tokens.append(player._metadata[0][1].removeprefix("Bearer "))
        return claimed


def test_the_seat_token_never_reaches_the_bot(
    sdk_server: ServerProcess, sdk_client: Client
) -> None:
    Recorder.given, Recorder.calls, Recorder.time_left = [], Counter(), set()
    runner = TokenWatch(Recorder, settings(sdk_server))
    runner.tokens = []
    running = run_runner(runner)
    try:
        table_id = create_table(sdk_client.stub, bot_seats(3))
        finished(sdk_client.stub, table_id)
    finally:
        running.finish()
    tokens = set(runner.tokens)
    assert len(tokens) == 3 and all(len(t) >= 22 for t in tokens)
    # every hook was called: one instance per seat, closed with its seat
    calls = Recorder.calls
    assert calls["on_seat"] == calls["on_match_end"] == calls["on_leave"] == calls["close"] == 3
    assert calls["choose"] > 10 and calls["on_event"] > calls["choose"]
    assert Recorder.time_left == {math.inf}  # the table has no timer
    blob = b"\n".join(Recorder.given)
    assert b"SeatContext(table_id=" + repr(table_id).encode() in blob
    for token in tokens:
        assert token.encode() not in blob


class Shared(Trivial):
    """One instance for every seat: closed once, when the runner stops."""

    def __init__(self) -> None:
        self.left: list[int] = []
        self.closed = 0

    def on_leave(self, seat: sdk.SeatContext) -> None:
        self.left.append(seat.seat)

    async def close(self) -> None:
        self.closed += 1


def test_a_stop_gives_the_seats_back(sdk_server: ServerProcess, sdk_client: Client) -> None:
    human = pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN)
    table_id = create_table(sdk_client.stub, [human, *bot_seats(2)])
    bot = Shared()
    running = run_runner(Runner(bot, settings(sdk_server)))
    try:
        def seated() -> bool:
            seats = sdk_client.view(table_id).table.seats
            return [s.occupied for s in seats] == [False, True, True]

        wait_until(seated, what="the runner to take both bot seats")
    finally:
        running.finish()
    view = sdk_client.view(table_id)
    assert [s.occupied for s in view.table.seats] == [False, False, False]
    assert view.table.status == pb.TABLE_STATUS_WAITING
    assert sorted(bot.left) == [1, 2] and bot.closed == 1


def test_bad_settings_are_refused_before_any_call(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="entrant names"):
        asyncio.run(sdk.serve(Trivial, "127.0.0.1:1", "Not A Name"))
    with pytest.raises(ValueError, match="cannot read"):
        asyncio.run(sdk.serve(Trivial, "127.0.0.1:1", "alice", tls_ca=str(tmp_path / "no.pem")))
    with pytest.raises(TypeError, match="thread"):  # a misspelt setting is no silent default
        asyncio.run(sdk.serve(Trivial, "127.0.0.1:1", "alice", thread=4))
    assert sdk.run(Trivial, "127.0.0.1:1", "alice", threads=0) == 2


def test_run_and_serve_build_one_settings_object_with_the_key_from_its_file(
    tmp_path: Path,
) -> None:
    key_file = tmp_path / "key"
    key_file.write_text("k-123\n")
    key_file.chmod(0o600)
    settings = sdk.settings_of("h:1", "alice", "", {"key_file": str(key_file), "threads": 3})
    assert settings == sdk.RunnerSettings(server="h:1", entrant="alice", key="k-123", threads=3)


def test_the_sdk_names_the_built_in_levels() -> None:
    from bots.levels import LEVELS

    assert tuple(LEVELS) == sdk.LEVEL_NAMES


class LateOnce(sdk.Bot):
    """Its first decision overruns (blocked until released); the others answer at once, each
    noting the time it was given."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.lock = threading.Lock()
        self.first = True
        self.time_left: list[float] = []

    def choose(self, view: pb.TableView, legal_moves: list[str], time_left: float) -> str:
        with self.lock:
            first, self.first = self.first, False
        if first:
            self.release.wait(60)
        else:
            self.time_left.append(time_left)
        return random.choice(legal_moves)


def test_a_bot_past_its_deadline_is_played_for_as_late_and_the_table_goes_on(
    sdk_server: ServerProcess, sdk_client: Client
) -> None:
    bot = LateOnce()
    # a second thread: the first one stays blocked (it cannot be killed) and holds its slot
    running = run_runner(Runner(bot, settings(sdk_server, threads=2, margin=1.0)))
    try:
        table_id = create_table(sdk_client.stub, bot_seats(3), turn_seconds=2.0)
        finished(sdk_client.stub, table_id)
    finally:
        bot.release.set()
        running.finish()
    moves = list(record(sdk_client, table_id).moves)
    assert [m.fallback for m in moves] == ["late"] + [""] * (len(moves) - 1)
    assert not any(m.auto for m in moves)  # the runner moved before the server's timer
    # the others were told their time: the turn's 2 s less the margin, at most
    assert bot.time_left and all(0 < t <= 1.0 for t in bot.time_left)


# --- deadlines, against a scripted server (the views say when the server would play) -------

class Waits(sdk.Bot):
    """Blocks in choose() until released (a search that overruns), noting what it was given."""

    def __init__(self, blocking: bool = True, sleep: float = 0.0) -> None:
        self.blocking = blocking
        self.sleep = sleep
        self.release = threading.Event()
        self.given: list[float] = []
        self.returned = threading.Event()

    def choose(self, view: pb.TableView, legal_moves: list[str], time_left: float) -> str:
        self.given.append(time_left)
        if self.sleep:
            time.sleep(self.sleep)
        else:
            self.release.wait(30)
        self.returned.set()
        return legal_moves[-1]

    def default_move(self, view: pb.TableView, legal_moves: list[str]) -> str:
        return legal_moves[0]


def timed_view(seconds: float) -> pb.TableView:
    v = view(5, ["first", "last"])
    v.deadline = time.time() + seconds
    return v


def play_once(bot: sdk.Bot, v: pb.TableView, margin: float = 0.3) -> ScriptedStub:
    stub = ScriptedStub(v)
    context = sdk.SeatContext("t1", SEAT, "dou_dizhu", "alice", 3)
    player = SeatPlayer(stub, context, "token", bot, 5, asyncio.Event(),  # type: ignore[arg-type]
                        margin=margin)
    asyncio.run(player._act(v))
    return stub


def test_a_blocking_bot_past_its_deadline_gets_the_default_move_as_late() -> None:
    bot = Waits()
    try:
        stub = play_once(bot, timed_view(0.5))
    finally:
        bot.release.set()
    # the runner did not wait for the answer: the default move, saying late
    assert stub.sent == [("first", 5)] and stub.fallbacks == ["late"]
    assert len(bot.given) == 1 and 0 < bot.given[0] <= 0.2
    assert bot.returned.wait(10)  # its answer came after all, and was dropped
    assert stub.sent == [("first", 5)]


def test_a_loop_bot_answering_past_its_deadline_is_late_too() -> None:
    stub = play_once(Waits(blocking=False, sleep=0.5), timed_view(0.4))
    assert stub.sent == [("first", 5)] and stub.fallbacks == ["late"]


def test_a_deadline_already_passed_is_not_waited_for() -> None:
    bot = Waits(blocking=False, sleep=0.01)
    stub = play_once(bot, timed_view(0.1))
    assert not bot.given and stub.fallbacks == ["late"]


def test_time_left_is_the_deadline_minus_the_margin() -> None:
    bot = Waits(blocking=False, sleep=0.001)
    stub = play_once(bot, timed_view(100.0), margin=2.0)
    assert stub.sent == [("last", 5)] and stub.fallbacks == [""]
    assert 97.0 < bot.given[0] <= 98.0
    bot = Waits(blocking=True, sleep=0.001)
    stub = play_once(bot, view(5, ["first", "last"]))  # no timer
    assert bot.given == [math.inf] and stub.fallbacks == [""]


# --- entrants -------------------------------------------------------------------------------

def names(client: Client, table_id: str) -> list[str]:
    return [s.name for s in client.view(table_id).table.seats]


def test_an_entrant_takes_its_own_seats_and_workers_never_do(
    sdk_server: ServerProcess, sdk_client: Client
) -> None:
    from bots.worker import Settings, Worker

    seats = [*bot_seats(1, "alice"), *bot_seats(1, "bob"),
             pb.SeatSpec(kind=pb.SEAT_KIND_BOT, bot_level="random")]
    table_id = create_table(sdk_client.stub, seats)
    worker = Worker(Settings(server=sdk_server.address, poll=0.1))
    alice = run_runner(Runner(Trivial, RunnerSettings(server=sdk_server.address,
                                                      entrant="alice", poll=0.1)))
    workers = run_runner(worker)
    bob: Running | None = None
    try:
        wait_until(lambda: [s.occupied for s in sdk_client.view(table_id).table.seats]
                   == [True, False, True], what="alice and the worker to take their seats")
        assert names(sdk_client, table_id) == ["alice", "", "random bot"]
        bob = run_runner(Runner(Trivial, RunnerSettings(server=sdk_server.address,
                                                        entrant="bob", poll=0.1)))
        view = finished(sdk_client.stub, table_id)
        assert [s.name for s in view.table.seats] == ["alice", "bob", "random bot"]
        assert [s.entrant for s in view.table.seats] == ["alice", "bob", "random"]
    finally:
        for running in (alice, workers, bob):
            if running is not None:
                running.finish()


def test_runners_pick_the_seats_of_their_entrant_only() -> None:
    def seat(entrant: str = "", level: str = "") -> pb.SeatInfo:
        return pb.SeatInfo(kind=pb.SEAT_KIND_BOT, entrant=entrant, bot_level=level)

    alice = RunnerSettings(entrant="alice")
    assert alice.serves(seat("alice")) and not alice.serves(seat("bob"))
    assert not alice.serves(seat("random", "random")) and not alice.serves(seat())
    levels = RunnerSettings()  # the built-in workers'
    assert levels.serves(seat("hard", "hard")) and levels.serves(seat("", "hard"))
    assert not levels.serves(seat("alice"))
    hard = RunnerSettings(entrant="hard")  # a level's name: that level's seats
    assert hard.serves(seat("hard", "hard")) and not hard.serves(seat("easy", "easy"))
    assert not hard.serves(seat("alice"))


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    tmp = tmp_path_factory.mktemp("sdk-keys")
    (tmp / "keys").write_text(f"tables-key-0123456789abcdef tables\n{KEY} entrant:{ENTRANT}\n")
    proc = ServerProcess(db=tmp / "keyed.db",
                         extra=("--api-keys", str(tmp / "keys"), "--fill-interval", "0.1")).start()
    yield proc
    proc.stop()


def test_with_api_keys_the_entrant_plays_with_its_key(keyed: ServerProcess) -> None:
    client = Client(keyed.address)
    try:
        table_id = client.stub.CreateTable(
            pb.CreateTableRequest(game="dos", players=2, seats=bot_seats(2)),
            metadata=[("x-api-key", "tables-key-0123456789abcdef")], timeout=10).table_id
        with structlog.testing.capture_logs() as logs:
            keyless = run_runner(Runner(Trivial, RunnerSettings(server=keyed.address,
                                                                entrant=ENTRANT, poll=0.1)))
            try:
                wait_until(lambda: any(e["event"] == "claim_refused" for e in logs),
                           what="the claim without a key to be refused")
            finally:
                keyless.finish()
            assert not any(s.occupied for s in client.view(table_id).table.seats)
            keyed_runner = run_runner(Runner(Trivial, RunnerSettings(
                server=keyed.address, entrant=ENTRANT, key=KEY, poll=0.1)))
            try:
                finished(client.stub, table_id)
            finally:
                keyed_runner.finish()
        refused = [e for e in logs if e["event"] == "claim_refused"]
        assert refused[0]["code"] == "UNAUTHENTICATED"
        assert KEY not in repr(logs)
    finally:
        client.close()
