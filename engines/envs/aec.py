"""Croupier's games as PettingZoo AEC environments, generic over the engine and its codec.

>>> from engines.registry import ENGINES
>>> e = env(ENGINES[0])
>>> e.reset(seed=7)
>>> obs, reward, terminated, truncated, info = e.last()
>>> int(obs["action_mask"].sum()) > 0, e.agent_selection == f"player_{info['view'].seat}"
(True, True)

The rules stay the engine's: the acting agent is a seat the engine waits for (`on_turn`), its
legal moves become the action mask through the codec, and a chosen action is played as the
legal move that has it. Seats that may only act out of turn (an optional call, a catch) are
never offered those moves while another seat is on turn: the AEC interface lets one agent
act at a time, and the engine never needs them to.

Rewards: each seat's change of match total as the engine scores it (partners share their
team's score), given when a deal ends. An episode is one match (by default a one-deal match,
engines/envs/episode.py); `reset(seed=s)` deals the match from seed `s` exactly as a table
with that seed would; resets without a seed continue a sequence of seeds drawn from the last
one given (or from the system's entropy). `env()` wraps the environment as PettingZoo's
classic games are (illegal moves end the episode); `raw_env` is the environment alone.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import numpy as np
from google.protobuf import text_format
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from engines.envs.bounds import utility_bounds
from engines.envs.episode import episode_setup
from engines.envs.registry import get_codec

RENDER_MODES = ("human", "ansi")


class _Infos(dict[str, dict[str, Any]]):
    """`infos[agent]` is `{"view": that seat's view message}`, built when first read after a
    step: an n-player step builds no view nobody reads."""

    def __init__(self, env: CroupierEnv) -> None:
        super().__init__((agent, {}) for agent in env.agents)
        self._env = env
        self._built: dict[str, int] = {}

    def __getitem__(self, agent: str) -> dict[str, Any]:
        env = self._env
        if self._built.get(agent) != env._version:
            info = {"view": env._view(env._seats[agent])}
            super().__setitem__(agent, info)
            self._built[agent] = env._version
            return info
        return super().__getitem__(agent)

    def get(self, agent: str, default: Any = None) -> Any:
        try:
            return self[agent]
        except KeyError:
            return default

    def values(self) -> list[dict[str, Any]]:  # type: ignore[override]
        return [self[agent] for agent in self]

    def items(self) -> list[tuple[str, dict[str, Any]]]:  # type: ignore[override]
        return [(agent, self[agent]) for agent in self]

    def copy(self) -> dict[str, dict[str, Any]]:
        return dict(self.items())


class CroupierEnv(AECEnv[str, dict[str, np.ndarray], int]):
    """One Croupier game for given players and options (see the module docstring)."""

    metadata = {"render_modes": list(RENDER_MODES), "name": "croupier", "is_parallelizable": False}

    def __init__(
        self,
        game: str,
        players: int | None = None,
        options: Mapping[str, Any] | None = None,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be one of {', '.join(RENDER_MODES)} or None")
        self.game = game
        self.engine, self.players, self.options = episode_setup(game, players, options)
        self.codec = get_codec(game)
        self.render_mode = render_mode
        self.metadata = {**self.metadata, "name": f"croupier_{game}_v0"}
        self.possible_agents = [f"player_{i}" for i in range(self.players)]
        self._seats = {agent: i for i, agent in enumerate(self.possible_agents)}
        self.num_actions = self.codec.num_actions(self.players, self.options)
        shape = tuple(self.codec.observation_shape(self.players, self.options))
        self._observation_spaces = {
            agent: spaces.Dict({
                "observation": spaces.Box(-np.inf, np.inf, shape, np.float32),
                "action_mask": spaces.Box(0, 1, (self.num_actions,), np.int8),
            })
            for agent in self.possible_agents
        }
        self._action_spaces = {a: spaces.Discrete(self.num_actions) for a in self.possible_agents}
        self.state_space = spaces.Box(-np.inf, np.inf, (self.players * int(np.prod(shape)),),
                                      np.float32)
        self._seeds = random.Random()
        self.engine_state: Any = None  # the engine's state (`state()` is PettingZoo's)
        self._version = 0
        self._views: dict[int, Any] = {}
        self._legal: dict[int, Any] = {}

    # --- spaces -------------------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self._action_spaces[agent]

    # --- episode ------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new match, dealt from `seed` (the game's options are the constructor's;
        `options` here is accepted as PettingZoo's API passes it, and ignored)."""
        if seed is not None:
            self._seeds = random.Random(seed)
            deal_seed = str(seed)
        else:
            deal_seed = f"{self._seeds.getrandbits(64):016x}"
        self.engine_state = self.engine.new_game(self.players, self.options, deal_seed)
        self.agents = self.possible_agents[:]
        self.rewards = {agent: 0.0 for agent in self.agents}
        self._cumulative_rewards = {agent: 0.0 for agent in self.agents}
        self.terminations = {agent: False for agent in self.agents}
        self.truncations = {agent: False for agent in self.agents}
        self._totals = self.engine.result(self.engine_state).totals
        self._deal = self.engine.deal_number(self.engine_state)
        self._skip_agent_selection = None
        self.infos = _Infos(self)
        self._advance()

    def _advance(self) -> None:
        """After a move: the next acting seat and its legal moves by action."""
        self._version += 1
        self._views = {}
        on_turn = self.engine.on_turn(self.engine_state)
        if not on_turn:
            self._legal = {}
            return
        seat = min(on_turn)
        self.agent_selection = self.possible_agents[seat]
        action = self.codec.action
        state = self.engine_state
        self._legal = {action(state, seat, m): m for m in self.engine.legal_moves(state, seat)}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{agent} is to act: None is only for agents whose match is over")
        a = int(action)
        move = self._legal.get(a)
        if move is None:
            name = (self.codec.action_name(a, self.players, self.options)
                    if 0 <= a < self.num_actions else "out of range")
            raise ValueError(
                f"action {a} ({name}) is not legal for {agent} now; legal actions: "
                f"{', '.join(map(str, sorted(self._legal)))}"
            )
        seat = self._seats[agent]
        self._cumulative_rewards[agent] = 0.0
        for other in self.rewards:
            self.rewards[other] = 0.0
        engine = self.engine
        self.engine_state = engine.apply(self.engine_state, seat, move)
        over = engine.is_over(self.engine_state)
        deal = engine.deal_number(self.engine_state)
        if over or deal != self._deal:
            totals = engine.result(self.engine_state).totals
            for i, other in enumerate(self.possible_agents):
                self.rewards[other] = float(totals[i] - self._totals[i])
            self._totals, self._deal = totals, deal
        if over:
            for other in self.agents:
                self.terminations[other] = True
        self._advance()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    # --- what agents see ----------------------------------------------------------------
    def _view(self, seat: int) -> Any:
        view = self._views.get(seat)
        if view is None:
            view = self._views[seat] = self.engine.view(self.engine_state, seat)
        return view

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self._seats[agent]
        obs = self.codec.observe(self._view(seat), self.players, self.options)
        mask = np.zeros(self.num_actions, dtype=np.int8)
        if agent == self.agent_selection and self._legal and not self.terminations[agent]:
            mask[list(self._legal)] = 1
        return {"observation": obs, "action_mask": mask}

    def state(self) -> np.ndarray:
        """Every seat's observation, seat by seat (`state_space`): what the seats see
        together, every hand included, for a centralised critic in training. Never a seat's
        policy input: it shows the other hands."""
        if self.engine_state is None:
            raise RuntimeError("no match yet: call reset()")
        observe, players, options = self.codec.observe, self.players, self.options
        return np.concatenate(
            [observe(self._view(seat), players, options).ravel() for seat in range(players)]
        )

    def legal_moves(self) -> dict[int, str]:
        """The acting agent's legal moves in the game's notation, by action."""
        fmt = self.engine.format_move
        return {a: fmt(m) for a, m in sorted(self._legal.items())}

    def render(self) -> str | None:
        """The acting seat's view (hand, table) and its legal moves, as text."""
        if self.render_mode is None:
            return None
        if self.engine_state is None:
            text = "no match yet: call reset()"
        else:
            agent = self.agent_selection
            seat = self._seats[agent]
            if self.engine.is_over(self.engine_state):
                head = f"{self.engine.info.title}: over; totals {list(self._totals)}"
            else:
                head = f"{self.engine.info.title}: {agent} (seat {seat}) to act"
            body = text_format.MessageToString(self._view(seat)).rstrip()
            legal = "\n".join(f"  {a}: {t}" for a, t in self.legal_moves().items())
            text = f"{head}\n{body}\nlegal moves:\n{legal}" if legal else f"{head}\n{body}"
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release: the engine holds no resources."""


raw_env = CroupierEnv
"""The environment without PettingZoo's wrappers (as `raw_env` in pettingzoo.classic): a bad
action raises ValueError and changes nothing."""


def env(
    game: str,
    players: int | None = None,
    options: Mapping[str, Any] | None = None,
    render_mode: str | None = None,
    illegal_reward: float | None = None,
) -> AECEnv[str, dict[str, np.ndarray], int]:
    """The AEC environment of `game` (engines.registry name) for `players` (default: the
    game's smallest table) and options (default: a one-deal match), wrapped as PettingZoo's
    classic games are: an illegal action ends the episode, the agent that chose it getting
    `illegal_reward` (default: the lowest return the rules allow, engines/envs/bounds.py, so
    that no illegal move pays better than a legal one) and the others nothing; an action
    outside the space (or None for a live agent) fails an assertion; calls out of order
    (`step` before `reset`...) are errors. The raw environment is `raw_env`."""
    e = CroupierEnv(game, players, options, render_mode)
    if illegal_reward is None:
        illegal_reward = utility_bounds(game, e.players, e.options)[0]
    wrapped: AECEnv[str, dict[str, np.ndarray], int]
    wrapped = wrappers.TerminateIllegalWrapper(e, illegal_reward=illegal_reward)
    wrapped = wrappers.AssertOutOfBoundsWrapper(wrapped)
    return wrappers.OrderEnforcingWrapper(wrapped)
