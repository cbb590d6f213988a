"""The single-agent environment with fixed opponents (engines/envs/single.py) and the built-in
levels as its opponents (bots/env_opponents.py): the learner's rewards are its match totals,
opponents see only their own seat's view, and a policy can be measured against `heuristic`
or `medium`, not only random."""

from __future__ import annotations

import random
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

from bots.env_opponents import level_opponent
from engines.contract import Game
from engines.envs.single import SingleAgentEnv, random_opponent
from engines.registry import ENGINES


def _play(e: SingleAgentEnv, seed: int, rng: random.Random) -> tuple[float, int]:
    """A random learner to the end of a match: its summed rewards and its decisions."""
    obs, info = e.reset(seed=seed)
    total, decisions, done = 0.0, 0, False
    while not done:
        legal = np.flatnonzero(obs["action_mask"])
        assert sorted(info["legal_moves"]) == [int(a) for a in legal]
        obs, reward, done, truncated, info = e.step(int(rng.choice(legal)))
        assert not truncated
        total += reward
        decisions += 1
    return total, decisions


@pytest.mark.parametrize("game", ENGINES)
def test_rewards_are_the_learners_match_total(game: str) -> None:
    for seat in (0, 1):
        e = SingleAgentEnv(game, seat=seat)
        total, decisions = _play(e, 5, random.Random(seat))
        assert decisions > 0
        result = e.env.engine.result(e.env.engine_state)
        assert result.finished and total == float(result.totals[seat])
        with pytest.raises(RuntimeError, match="over"):
            e.step(0)


@pytest.mark.parametrize("game", ENGINES)
def test_opponents_see_only_their_own_view(game: str) -> None:
    calls: list[int] = []

    def spy(engine: Game, view: Any, rng: random.Random) -> Any:
        state = e.env.engine_state  # the truth, read here to compare: never passed
        assert isinstance(engine, Game) and isinstance(rng, random.Random)
        assert type(view).__name__.endswith("View")
        assert view.seat != e.seat and view == engine.view(state, view.seat)
        assert view != engine.view(state, e.seat)
        calls.append(view.seat)
        return random_opponent(engine, view, rng)

    e = SingleAgentEnv(game, seat=0, opponents=spy)
    _play(e, 2, random.Random(2))
    assert calls and 0 not in calls


@pytest.mark.parametrize("game", ENGINES)
def test_levels_as_opponents(game: str) -> None:
    """heuristic and medium (a short budget) play every other seat of whole matches."""
    for opponent in (level_opponent("heuristic"), level_opponent("medium", iterations=8)):
        e = SingleAgentEnv(game, seat=1, opponents=opponent)
        _, decisions = _play(e, 3, random.Random(3))
        assert decisions > 0


def test_seeds_replay_a_match_with_its_opponents() -> None:
    def moves(seed: int) -> list[str]:
        e = SingleAgentEnv("dos", 3, opponents=level_opponent("easy", iterations=5))
        obs, info = e.reset(seed=seed)
        seen = []
        done = False
        while not done:
            seen.append(str(info["view"]))
            obs, _, done, _, info = e.step(min(info["legal_moves"]))
        return seen

    assert moves(4) == moves(4)


def test_one_opponent_per_seat_and_bad_arguments() -> None:
    played: set[int] = set()

    def seat_spy(expected: int) -> Any:
        def opponent(engine: Game, view: Any, rng: random.Random) -> Any:
            assert view.seat == expected
            played.add(expected)
            return random_opponent(engine, view, rng)
        return opponent

    e = SingleAgentEnv("dobro", 4, seat=2, opponents=[seat_spy(0), seat_spy(1), seat_spy(3)])
    _play(e, 1, random.Random(1))
    assert played == {0, 1, 3}
    with pytest.raises(ValueError, match="one for each"):
        SingleAgentEnv("dobro", 4, opponents=[random_opponent])
    with pytest.raises(ValueError, match="seat"):
        SingleAgentEnv("dos", 2, seat=2)
    with pytest.raises(ValueError, match="unknown bot level"):
        level_opponent("grandmaster")
    with pytest.raises(ValueError, match="no budget"):
        level_opponent("heuristic", iterations=10)
    e = SingleAgentEnv("dos", 2)
    with pytest.raises(RuntimeError, match="reset"):
        e.step(0)
    obs, _ = e.reset(seed=1)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with pytest.raises(ValueError, match="not legal"):
        e.step(illegal)

    def cheat(engine: Game, view: Any, rng: random.Random) -> Any:
        return "no such move"

    with pytest.raises(ValueError, match="not a legal move"):
        e = SingleAgentEnv("dos", 2, seat=1, opponents=cheat)
        obs, _ = e.reset(seed=1)
        for _ in range(50):  # the learner's turn ends, then the opponent answers
            obs, *_ = e.step(int(np.flatnonzero(obs["action_mask"])[-1]))


def test_engines_import_no_bots() -> None:
    code = ("import sys, engines.envs.single, engines.envs.aec; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('bots', 'service')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
