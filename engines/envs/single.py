"""One seat of a Croupier game as a gymnasium environment, the other seats played by given
opponents: a learner is measured against fixed players (random, the built-in levels), not
only against itself.

An opponent is a callable `(engine, view, rng) -> move`: it gets the game's engine (the
rules, no state), its own seat's view message (exactly what a Croupier client of that seat
gets, never the engine state) and a random.Random, and answers one of its legal moves (the
engine's move or its notation). `random_opponent` is here; the built-in levels are in
`bots.env_opponents.level_opponent` (engines import no bots).

>>> from engines.registry import ENGINES
>>> e = SingleAgentEnv(ENGINES[0], seat=1)
>>> obs, info = e.reset(seed=3)
>>> int(obs["action_mask"].sum()) > 0, info["view"].seat
(True, 1)
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np

from engines.contract import Game
from engines.envs.aec import CroupierEnv

Opponent = Callable[[Game, Any, random.Random], Any]
"""Plays a seat from its own view: `(engine, view, rng)` -> one of its legal moves (a move or
its notation)."""


def random_opponent(engine: Game, view: Any, rng: random.Random) -> Any:
    """Uniform over the seat's legal moves, drawn from its view alone (`engine.sample`
    deals the hidden cards anew: the legal moves depend only on what the seat sees)."""
    state = engine.sample(view, rng)
    moves = engine.legal_moves(state, view.seat)
    return moves[rng.randrange(len(moves))]


class SingleAgentEnv(gymnasium.Env[dict[str, np.ndarray], int]):
    """`seat` is the learner; every other seat is played by its opponent (one for all, or one
    per other seat, in seat order). Observations, actions and rewards are the learner's as
    in the PettingZoo environment (engines/envs/aec.py): the codec's features and action
    mask, its change of match total at each deal's end; an episode is one match."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(
        self,
        game: str,
        players: int | None = None,
        options: Mapping[str, Any] | None = None,
        seat: int = 0,
        opponents: Opponent | Sequence[Opponent] = random_opponent,
        render_mode: str | None = None,
    ) -> None:
        self.env = CroupierEnv(game, players, options, render_mode)
        n = self.env.players
        if not 0 <= seat < n:
            raise ValueError(f"seat must be 0 to {n - 1}, not {seat}")
        others = [s for s in range(n) if s != seat]
        if callable(opponents):
            self.opponents = dict.fromkeys(others, opponents)
        else:
            if len(opponents) != len(others):
                raise ValueError(f"give one opponent, or one for each of seats {others}")
            self.opponents = dict(zip(others, opponents, strict=True))
        self.seat = seat
        self.agent = f"player_{seat}"
        self.render_mode = render_mode
        self.observation_space = self.env.observation_space(self.agent)
        self.action_space = self.env.action_space(self.agent)
        self._rng = random.Random()
        self._pending = 0.0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """A new match dealt as the PettingZoo environment deals it from `seed`; the
        opponents' randomness follows from the seed too."""
        super().reset(seed=seed)
        self.env.reset(seed=seed)
        self._rng = random.Random(f"opponents/{seed}" if seed is not None else None)
        self._pending = self._play_others()  # a deal may end before the learner first acts
        return self._observe()

    def step(
        self, action: int
    ) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        """The learner's action (ValueError if not legal, nothing changed), then the other
        seats' moves until the learner is to act again or the match is over; the reward is
        the learner's change of total over them."""
        env = self.env
        if env.engine_state is None:
            raise RuntimeError("no match yet: call reset()")
        if env.terminations[self.agent]:
            raise RuntimeError("the match is over: call reset()")
        env.step(int(action))
        reward = self._pending + float(env.rewards[self.agent]) + self._play_others()
        self._pending = 0.0
        obs, info = self._observe()
        return obs, reward, bool(env.terminations[self.agent]), False, info

    def _play_others(self) -> float:
        """Opponents move until the learner acts or the match ends; the learner's rewards
        of those moves."""
        env = self.env
        engine = env.engine
        reward = 0.0
        while not env.terminations[self.agent] and env.agent_selection != self.agent:
            seat = env._seats[env.agent_selection]
            view = engine.view(env.engine_state, seat)
            move = self.opponents[seat](engine, view, self._rng)
            text = move if isinstance(move, str) else engine.format_move(move)
            actions = {t: a for a, t in env.legal_moves().items()}
            if text not in actions:
                raise ValueError(f"the opponent of seat {seat} answered {text!r}, not a legal move")
            env.step(actions[text])
            reward += float(env.rewards[self.agent])
        return reward

    def _observe(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        env = self.env
        obs = env.observe(self.agent)
        acting = not env.terminations[self.agent] and env.agent_selection == self.agent
        return obs, {"view": env._view(self.seat), "legal_moves": env.legal_moves() if acting
                     else {}}

    def render(self) -> str | None:
        return self.env.render()
