"""A bot seat's decisions against a scripted server: the races and failures a real server
cannot be made to produce on cue (another seat's out-of-turn move landing during a search, a
table that goes back, a policy that fails, refusals, a server away while the seat is given
back). Everything the worker does end to end is in test_bots_worker.py; here the stub answers
exactly as the real servicer would in each case, and records what the seat sent."""

from __future__ import annotations

import asyncio
import random
import threading
import time
from typing import Any

import grpc
import pytest
from croupier.v1 import croupier_pb2 as pb

from bots.sdk import SeatContext
from bots.sdk.seat import REFUSALS_BEFORE_FALLBACK, SeatPlayer
from bots.worker import LevelBot
from common.resend import MAX_RESENDS
from tests.seat_player_support import SEAT, ScriptedStub, view


def refusal(code: grpc.StatusCode, details: str = "") -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), details)


class CountingPolicy:
    """Answers `moves` in turn (or raises `fail`), counting its decisions."""

    name = "scripted"
    cpu_bound = False

    def __init__(self, moves: list[str] | None = None, fail: Exception | None = None) -> None:
        self.moves = list(moves or [])
        self.fail = fail
        self.calls = 0

    def choose(self, v: pb.TableView, rng: random.Random) -> str:
        self.calls += 1
        if self.fail is not None:
            raise self.fail
        return self.moves.pop(0) if self.moves else v.legal_moves[0]


def seat_player(stub: ScriptedStub, policy: Any, version: int = 5, table: str = "t1",
                slot: asyncio.Semaphore | None = None) -> SeatPlayer:
    """A seat played by a level bot deciding with `policy`."""
    context = SeatContext(table, SEAT, "dou_dizhu", "random", 3)
    return SeatPlayer(stub, context, "token", LevelBot(policy), version,  # type: ignore[arg-type]
                      asyncio.Event(), search_slot=slot)


def player(stub: ScriptedStub, policy: Any, version: int = 5) -> SeatPlayer:
    return seat_player(stub, policy, version)


def test_a_move_overtaken_by_an_out_of_turn_move_is_sent_again_not_searched_again() -> None:
    # while the seat thought, another seat declined an announcement: version 5 -> 6, the
    # seat still on turn with the same card legal
    stub = ScriptedStub(view(6, ["Ac", "Kc"]), submits=[refusal(grpc.StatusCode.ABORTED)])
    policy = CountingPolicy(["Kc"])
    asyncio.run(player(stub, policy)._act(view(5, ["Ac", "Kc"])))
    assert stub.sent == [("Kc", 5), ("Kc", 6)]
    assert policy.calls == 1


def test_a_move_no_longer_fitting_the_table_is_searched_again() -> None:
    # the other seat's move took the card's place (no longer legal): decide anew
    stub = ScriptedStub(view(6, ["Ac"]), submits=[refusal(grpc.StatusCode.ABORTED)])
    policy = CountingPolicy(["Kc", "Ac"])
    asyncio.run(player(stub, policy)._act(view(5, ["Ac", "Kc"])))
    assert stub.sent == [("Kc", 5), ("Ac", 6)] and policy.calls == 2
    # the seat's turn changed meanwhile (an optional move became its turn): decide anew
    stub = ScriptedStub(view(6, ["pass", "re"], on_turn=True),
                        submits=[refusal(grpc.StatusCode.ABORTED)])
    policy = CountingPolicy(["pass", "re"])
    asyncio.run(player(stub, policy)._act(view(5, ["pass", "re"], on_turn=False)))
    assert stub.sent == [("pass", 5), ("re", 6)] and policy.calls == 2
    # the seat was not on turn before or after, but the table waits for another seat now (a
    # card was played meanwhile, not just an optional move): decide anew
    stub = ScriptedStub(pb.TableView(version=6, seat=SEAT, legal_moves=["pass", "re"],
                                     to_act=[SEAT, 3], on_turn=[3]),
                        submits=[refusal(grpc.StatusCode.ABORTED)])
    policy = CountingPolicy(["re", "pass"])
    before = pb.TableView(version=5, seat=SEAT, legal_moves=["pass", "re"], to_act=[SEAT, 2],
                          on_turn=[2])
    asyncio.run(player(stub, policy)._act(before))
    assert stub.sent == [("re", 5), ("pass", 6)] and policy.calls == 2


def test_a_resent_move_overtaken_again_and_again_is_decided_anew() -> None:
    # sent again at each new version up to MAX_RESENDS times (common.resend), then searched
    stub = ScriptedStub(view(6, ["Ac", "Kc"]),
                        submits=[refusal(grpc.StatusCode.ABORTED)] * (MAX_RESENDS + 1))
    policy = CountingPolicy(["Kc", "Ac"])

    def moved_on(move: str, version: int) -> pb.TableView:
        return view(version + 1, [], to_act=[])

    stub.after = moved_on
    p = player(stub, policy)

    async def go() -> None:
        original = stub.GetView

        async def get_view(request: pb.GetViewRequest, **kw: Any) -> pb.TableView:
            stub.current = view(stub.current.version + (1 if stub.sent else 0), ["Ac", "Kc"])
            return await original(request, **kw)

        stub.GetView = get_view  # type: ignore[method-assign]
        await p._act(view(5, ["Ac", "Kc"]))

    asyncio.run(go())
    assert [m for m, _ in stub.sent] == ["Kc"] * (MAX_RESENDS + 1) + ["Ac"]
    versions = [v for _, v in stub.sent]
    assert versions == sorted(set(versions))  # each at the version it was refused from
    assert policy.calls == 2


def test_a_failing_policy_still_moves_legally() -> None:
    stub = ScriptedStub(view(5, ["3", "pass"]))
    policy = CountingPolicy(fail=RuntimeError("a bug quoting cards 3 3 4"))
    asyncio.run(player(stub, policy)._act(view(5, ["3", "pass"])))
    assert len(stub.sent) == 1 and stub.sent[0][0] in ("3", "pass")
    assert stub.fallbacks == ["crashed"]


def test_an_unlisted_answer_refused_is_replaced_by_a_legal_move() -> None:
    # "bad" is no listed move: sent as given (it might be another spelling of one), refused,
    # then a legal move in its place, saying so, without asking the bot again
    stub = ScriptedStub(view(5, ["ok"]), submits=[refusal(grpc.StatusCode.INVALID_ARGUMENT)])
    policy = CountingPolicy(["bad"] * 10)
    asyncio.run(player(stub, policy)._act(view(5, ["ok"])))
    assert stub.sent == [("bad", 5), ("ok", 5)]
    assert stub.fallbacks == ["", "illegal"]
    assert policy.calls == 1


def test_refused_decisions_fall_back_on_a_listed_move() -> None:
    # the server refuses a move it listed (a worker and a server of different versions): the
    # bot decides again, REFUSALS_BEFORE_FALLBACK times, then a listed move it did not refuse
    refused = [refusal(grpc.StatusCode.FAILED_PRECONDITION)] * REFUSALS_BEFORE_FALLBACK
    stub = ScriptedStub(view(5, ["ok", "no"]), submits=list(refused))
    policy = CountingPolicy(["no"] * 10)
    asyncio.run(player(stub, policy)._act(view(5, ["ok", "no"])))
    assert [m for m, _ in stub.sent] == ["no"] * REFUSALS_BEFORE_FALLBACK + ["ok"]
    assert stub.fallbacks == [""] * REFUSALS_BEFORE_FALLBACK + ["illegal"]
    assert policy.calls == REFUSALS_BEFORE_FALLBACK
    # and a table that refuses even its own listed moves is left alone, not spun on
    stub = ScriptedStub(view(5, ["ok"]),
                        submits=[refusal(grpc.StatusCode.FAILED_PRECONDITION)] * 20)
    asyncio.run(player(stub, CountingPolicy(["bad"] * 10))._act(view(5, ["ok"])))
    assert len(stub.sent) == REFUSALS_BEFORE_FALLBACK + 1
    stub = ScriptedStub(view(5, ["ok"]),
                        submits=[refusal(grpc.StatusCode.FAILED_PRECONDITION)] * 20)
    asyncio.run(player(stub, CountingPolicy(["ok"] * 10))._act(view(5, ["ok"])))
    assert len(stub.sent) == REFUSALS_BEFORE_FALLBACK + 1


def test_a_table_that_went_back_is_played_from_where_it_is() -> None:
    # the seat knew version 9; the store lost its last writes and the table is at 7
    stub = ScriptedStub(view(7, ["Ac"]))
    p = player(stub, CountingPolicy(), version=9)
    p.last_seen = 9

    async def go() -> None:
        fresh = await p._get_view()
        assert p.known == 7 and p.last_seen == 7
        await p._act(fresh)

    asyncio.run(go())
    assert stub.sent == [("Ac", 7)]


def test_giving_the_seat_back_outlasts_a_short_outage() -> None:
    stub = ScriptedStub(view(5, []))
    stub.leaves = [refusal(grpc.StatusCode.UNAVAILABLE)] * 2
    asyncio.run(player(stub, CountingPolicy())._leave())
    assert stub.left == 1
    stub = ScriptedStub(view(5, []))
    stub.leaves = [refusal(grpc.StatusCode.PERMISSION_DENIED)]
    asyncio.run(player(stub, CountingPolicy())._leave())  # not ours any more: no retry
    assert stub.left == 0 and not stub.leaves


class SlowSearch(CountingPolicy):
    """A CPU-bound policy that records how many of its searches overlap."""

    cpu_bound = True

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()
        self.running = 0
        self.most = 0

    def choose(self, v: pb.TableView, rng: random.Random) -> str:
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
        time.sleep(0.05)  # stands for a search's CPU time
        with self.lock:
            self.running -= 1
        return super().choose(v, rng)


@pytest.mark.parametrize("shared", [True, False])
def test_seats_of_one_process_search_one_at_a_time(shared: bool) -> None:
    policy = SlowSearch()

    async def go() -> None:
        slot = asyncio.Semaphore(1)
        players = []
        for i in range(4):
            players.append(seat_player(ScriptedStub(view(5, ["Ac"])), policy, table=f"t{i}",
                                       slot=slot if shared else None))
        await asyncio.gather(*(p._act(view(5, ["Ac"])) for p in players))

    asyncio.run(go())
    assert policy.calls == 4
    # one slot for the process: never two searches at once (each its own slot: they overlap)
    assert (policy.most == 1) if shared else (policy.most > 1)
