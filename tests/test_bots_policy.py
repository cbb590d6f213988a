"""Unit tests of the bot policies and of the worker's seat choice (no server needed)."""

from __future__ import annotations

import asyncio
import math
import random
from collections import Counter
from collections.abc import MutableMapping
from typing import Any

import pytest
import structlog
from croupier.v1 import croupier_pb2 as pb

from bots import policy
from bots.sdk.net import Backoff
from bots.worker import Settings, Worker
from engines.contract import IllegalMove


def view_with(moves: list[str]) -> pb.TableView:
    return pb.TableView(version=5, seat=1, to_act=[1], legal_moves=moves)


def test_random_policy_picks_only_legal_moves_uniformly() -> None:
    moves = ["pass", "3", "44", "888+3"]
    chooser = policy.get_policy("random")
    rng = random.Random(1)
    counts = Counter(chooser.choose(view_with(moves), rng) for _ in range(4000))
    assert set(counts) == set(moves)
    assert all(800 < n < 1200 for n in counts.values()), counts


def test_random_policy_refuses_a_view_without_moves() -> None:
    with pytest.raises(ValueError, match="no legal moves"):
        policy.RandomPolicy().choose(view_with([]), random.Random(0))


def test_unknown_level_falls_back_to_random_with_a_warning() -> None:
    with structlog.testing.capture_logs() as logs:
        chosen = policy.get_policy("ismcts-9000")
    assert isinstance(chosen, policy.RandomPolicy)
    assert [e["event"] for e in logs] == ["unknown_bot_level"]
    assert logs[0]["bot_level"] == "ismcts-9000"
    assert isinstance(policy.get_policy(""), policy.RandomPolicy)


def test_new_levels_plug_into_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    class First:
        name = "first"
        cpu_bound = False

        def choose(self, view: pb.TableView, rng: random.Random) -> str:
            return view.legal_moves[0]

    monkeypatch.setitem(policy.LEVELS, "first", First)
    assert policy.get_policy("first").choose(view_with(["bid 1", "pass"]), random.Random()) == "bid 1"


def test_engine_view_extracts_the_game_view() -> None:
    from engines.registry import get_game

    game = get_game("dou_dizhu")
    state = game.new_game(3, {}, "seed-1")
    seat = min(game.to_act(state))
    table_view = pb.TableView(table=pb.Table(game="dou_dizhu"), seat=seat)
    getattr(table_view.view, game.info.view_field).CopyFrom(game.view(state, seat))
    found, engine_view = policy.engine_view(table_view)
    assert found is game
    assert engine_view == game.view(state, seat)
    # what ISMCTS levels will do with it: a determinization consistent with the view
    assert game.view(game.sample(engine_view, random.Random(0)), seat) == engine_view


def table(seats: list[pb.SeatInfo]) -> pb.Table:
    return pb.Table(table_id="t1", game="dou_dizhu", players=len(seats), seats=seats)


def bot(seat: int, level: str = "random", occupied: bool = False) -> pb.SeatInfo:
    return pb.SeatInfo(seat=seat, kind=pb.SEAT_KIND_BOT, bot_level=level, occupied=occupied)


def human(seat: int) -> pb.SeatInfo:
    return pb.SeatInfo(seat=seat, kind=pb.SEAT_KIND_HUMAN)


def test_worker_picks_free_bot_seats_of_levels_it_serves() -> None:
    worker = Worker(Settings(server="x", levels=frozenset({"random"})))
    assert worker._pick_seat(table([human(0), bot(1, occupied=True), bot(2)])) == 2
    assert worker._pick_seat(table([human(0), bot(1, level="ismcts"), bot(2, occupied=True)])) is None
    assert worker._pick_seat(table([human(0), human(1), human(2)])) is None
    anything = Worker(Settings(server="x"))
    assert anything._pick_seat(table([human(0), bot(1, level="ismcts"), human(2)])) == 1


def test_worker_skips_seats_it_recently_failed_to_claim() -> None:
    import time

    worker = Worker(Settings(server="x"))
    worker.cooldown[("t1", 1)] = time.monotonic() + 60
    assert worker._pick_seat(table([bot(0, occupied=True), bot(1), bot(2)])) == 2


def test_settings_serve_the_default_level_for_an_empty_one() -> None:
    assert Settings(server="x", levels=frozenset({"random"})).serves("")
    assert not Settings(server="x", levels=frozenset({"ismcts"})).serves("")
    assert Settings(server="x").serves("anything")


def test_backoff_grows_to_its_cap_and_resets() -> None:
    backoff = Backoff(initial=0.1, maximum=1.0)
    delays = [backoff.next() for _ in range(8)]
    assert delays[0] <= 0.1 and all(d <= 1.0 for d in delays)
    assert backoff.current == 1.0
    backoff.reset()
    assert backoff.next() <= 0.1


def test_a_crashed_seat_is_logged_by_where_not_by_its_message() -> None:
    # an engine's refusal quotes the seat's cards: the log line names only the error and where
    async def crash() -> None:
        raise IllegalMove("your hand does not hold 7 (hand: 2 5 5 12 J S)")

    async def run() -> list[MutableMapping[str, Any]]:
        worker = Worker(Settings(server="x"))
        task = asyncio.create_task(crash())
        await asyncio.wait([task])
        with structlog.testing.capture_logs() as logs:
            worker._seat_done(("t1", 2), task)
        return logs

    logs = asyncio.run(run())
    assert [e["event"] for e in logs] == ["seat_crashed"]
    entry = logs[0]
    assert entry["error"] == "IllegalMove" and entry["seat"] == 2
    assert any("in crash" in w for w in entry["where"])
    assert "hand" not in repr(entry) and "12 J S" not in repr(entry)


def test_a_level_bot_searches_within_the_time_the_table_leaves(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    from bots.worker import LevelBot

    seen: list[float | None] = []

    def record(self: policy.LevelPolicy, view: pb.TableView, rng: random.Random) -> str:
        seen.append(self.level.seconds)
        self.last_iterations = 7
        return view.legal_moves[0]

    monkeypatch.setattr(policy.LevelPolicy, "choose", record)
    bot = LevelBot(policy.get_policy("hard"))  # 1,000 iterations or 1 s
    assert bot.choose(view_with(["pass"]), ["pass"], 0.5) == "pass"
    assert bot.choose(view_with(["pass"]), ["pass"], 10.0) == "pass"
    assert bot.choose(view_with(["pass"]), ["pass"], math.inf) == "pass"
    assert seen == [0.4, 1.0, 1.0] and bot.last_iterations == 7
    medium = LevelBot(policy.get_policy("medium"))  # 200 iterations, no time limit
    medium.choose(view_with(["pass"]), ["pass"], 2.0)
    assert seen[-1] == 1.6
