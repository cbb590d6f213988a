"""Croupier's games as OpenSpiel Python games: `croupier_<game>`, registered on import.

>>> import pyspiel
>>> import engines.envs.spiel
>>> from engines.registry import ENGINES
>>> game = pyspiel.load_game(f"croupier_{ENGINES[0]}")
>>> game.num_players() >= 2, game.num_distinct_actions() > 0, len(game.observation_tensor_shape())
(True, True, 1)

Game type: sequential, imperfect information, explicit chance. The deal is chance: the first
four moves are chance nodes of 256 equally likely outcomes each, whose bytes make the seed
the engine deals the match from (`new_game`), so a history of actions replays exactly and the
default serialization works; everything random later in the match (redeals, reshuffles)
follows from that seed as it does at a table. A game is zero-sum where its GameInfo says so
(`zero_sum`), else general-sum; the returns are the match totals as the engine scores
them. A one-deal episode (the default) has terminal rewards, as OpenSpiel's MCTS bots need; a
longer match gets its rewards at each deal's end. Utility bounds and the longest game follow
from the rules (each game's `GameInfo.bounds`, engines/envs/bounds.py).

Parameters: `players` (default the game's smallest table) and every engine option (default
as the engine's, but a one-deal match where the game has an option for it,
`GameInfo.one_deal`, engines/envs/episode.py).

Actions are the codec's; the acting player is a seat the engine waits for (`on_turn`): as in
the PettingZoo environment, seats that may only act out of turn are never offered those moves.
Observation tensor: the codec's features of the player's view; observation string: the view
message as text. Information-state string: that and the moves of the match as the player saw
them (the engine's `redact`); information-state tensor: the observation tensor and those moves,
one number each (`_Node.history_codes`): both perfect-recall.
`resample_from_infostate` (called from Python, as OpenSpiel's ISMCTS does) is backed by the
engine's `sample`: the hidden cards dealt anew, consistent with the player's view, and the
other players' records of the match drawn from the new world (`_world_history`).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
import pyspiel
from google.protobuf import text_format

from engines.contract import Game
from engines.envs.bounds import max_deals, max_moves, utility_bounds
from engines.envs.codec import Codec
from engines.envs.episode import episode_setup
from engines.envs.registry import get_codec
from engines.registry import ENGINES, get_game

SEED_NODES = 4
SEED_OUTCOMES = 256
_CHANCE = [(i, 1.0 / SEED_OUTCOMES) for i in range(SEED_OUTCOMES)]


class _Setup:
    """What a game's states share: engine, codec, players and options. Immutable, so a
    state's clone shares it (OpenSpiel deep-copies a Python state's attributes)."""

    _known: dict[tuple[str, str], _Setup] = {}

    def __init__(self, game: str, players: int, options: dict[str, Any]) -> None:
        self.game = game
        self.engine: Game = get_game(game)
        self.codec: Codec = get_codec(game)
        self.players = players
        self.options = options
        self.shape = tuple(self.codec.observation_shape(players, options))
        self.num_actions = self.codec.num_actions(players, options)
        self.max_moves = max_moves(game, players, options)
        self.one_deal = max_deals(game, players, options) == 1
        self.utility = utility_bounds(game, players, options)
        self.size = int(np.prod(self.shape))
        # only games whose `redact` hides part of a move need each player's record apart
        self.redacts = type(self.engine).redact is not Game.redact

    @classmethod
    def get(cls, game: str, players: int, options: dict[str, Any]) -> _Setup:
        key = (game, repr((players, sorted(options.items()))))
        setup = cls._known.get(key)
        if setup is None:
            setup = cls._known[key] = cls(game, players, options)
        return setup

    def __deepcopy__(self, memo: dict[int, Any]) -> _Setup:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (_Setup.get, (self.game, self.players, self.options))


class _Step(NamedTuple):
    """One move as each player saw it: `seen[o]` is (the move as `redact` shows it to player
    o, the action standing for that), `seen[players]` the spectator's; `deal` the deal it was
    made in."""

    seat: int
    deal: int
    seen: tuple[tuple[str, int], ...]


def _step(setup: _Setup, state: Any, seat: int, move: Any) -> _Step:
    """The move `seat` makes in `state`, as every player and a spectator see it."""
    engine, codec = setup.engine, setup.codec
    full = engine.format_move(move)
    action = codec.action(state, seat, move)
    deal = engine.deal_number(state)
    if not setup.redacts:
        return _Step(seat, deal, ((full, action),) * (setup.players + 1))
    seen = []
    for observer in (*range(setup.players), None):
        text = engine.redact(state, seat, move, observer)
        seen.append((text, action if text == full
                     else setup.codec.seen_action(state, seat, move, observer)))  # type: ignore[attr-defined]
    return _Step(seat, deal, tuple(seen))


class _Node:
    """One engine state with what the OpenSpiel state adds to it (the moves of the match as
    each player saw them, the last rewards): immutable, shared by clones, pickled through the
    engine's encoding."""

    def __init__(self, setup: _Setup, state: Any, history: tuple[_Step, ...],
                 totals: tuple[float, ...], rewards: tuple[float, ...]) -> None:
        self.setup = setup
        self.state = state
        self.history = history
        self.totals = totals
        self.rewards = rewards
        engine = setup.engine
        self.over = engine.is_over(state)
        on_turn = engine.on_turn(state)
        self.player = min(on_turn) if on_turn and not self.over else pyspiel.PlayerId.TERMINAL
        self._legal: dict[int, Any] | None = None

    def legal(self) -> dict[int, Any]:
        """The acting seat's legal moves by action (cached: states are immutable)."""
        if self._legal is None:
            if self.over:
                self._legal = {}
            else:
                action, seat, state = self.setup.codec.action, self.player, self.state
                moves = self.setup.engine.legal_moves(state, seat)
                self._legal = {action(state, seat, m): m for m in moves}
        return self._legal

    def record(self, observer: int) -> str:
        """The moves of the match as `observer` (players: the spectator) saw them."""
        return " | ".join(f"{step.seat}:{step.seen[observer][0]}" for step in self.history)

    def history_codes(self, observer: int, out: np.ndarray) -> None:
        """The moves as `observer` saw them, one number each into `out` (zeros after): the
        mover's seat relative to the observer times the number of actions, plus the action
        that stands for the move as seen, plus one."""
        setup = self.setup
        n, actions, history = setup.players, setup.num_actions, self.history
        if len(history) > len(out):
            raise AssertionError(
                f"{len(history)} moves, more than the {len(out)} the rules allow (bounds.py)"
            )
        me = observer if observer < n else 0
        out[:len(history)] = [
            ((step.seat - me) % n) * actions + step.seen[observer][1] + 1 for step in history
        ]
        out[len(history):] = 0.0

    def __deepcopy__(self, memo: dict[int, Any]) -> _Node:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        data = self.setup.engine.encode(self.state)
        return (_node, (self.setup, data, self.history, self.totals, self.rewards))


def _node(setup: _Setup, data: bytes, history: tuple[_Step, ...],
          totals: tuple[float, ...], rewards: tuple[float, ...]) -> _Node:
    return _Node(setup, setup.engine.decode(data), history, totals, rewards)


def _world_history(setup: _Setup, history: tuple[_Step, ...], world: Any,
                   player: int) -> tuple[_Step, ...]:
    """The moves of the match as each player saw them in `world`, a state resampled from
    `player`'s view: what `player` saw is kept, and what another player saw that `player`
    did not (its own exchanged cards) is taken from the world's own moves (`replay`), so that
    nothing of the true deal stays in the world. Where the engine cannot replay (earlier
    deals, games without `replay`), those players keep only what `player` saw of the move."""
    n = setup.players
    hidden = [i for i, step in enumerate(history)
              if step.seat != player and any(seen != step.seen[player] for seen in step.seen[:n])]
    if not hidden:
        return history
    engine = setup.engine
    steps = list(history)
    deal = engine.deal_number(world)
    current = [i for i, step in enumerate(history) if step.deal == deal]
    replayed = engine.replay(world)
    moves = list(replayed) if replayed is not None else []
    aligned = len(moves) == len(current) and all(
        seat == history[i].seat
        and engine.redact(state, seat, move, None) == history[i].seen[n][0]
        for i, (state, seat, move) in zip(current, moves, strict=False)
    )
    redrawn = dict(zip(current, moves, strict=False)) if aligned else {}
    for i in hidden:
        step = history[i]
        if i in redrawn:
            state, seat, move = redrawn[i]
            seen = list(_step(setup, state, seat, move).seen)
        else:
            seen = [step.seen[player]] * n + [step.seen[n]]
        seen[player] = step.seen[player]
        steps[i] = step._replace(seen=tuple(seen))
    return tuple(steps)


class CroupierState(pyspiel.State):
    """A match in progress: four chance nodes (the seed), then the engine's moves."""

    def __init__(self, game: CroupierGame) -> None:
        super().__init__(game)
        self._setup = game.setup
        self._seed: tuple[int, ...] = ()
        self._node: _Node | None = None

    def current_player(self) -> int:
        node = self._node
        return pyspiel.PlayerId.CHANCE if node is None else node.player

    def _legal_actions(self, player: int) -> list[int]:
        node = self._node
        if node is None or player != node.player:
            return []
        return sorted(node.legal())

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return list(_CHANCE)

    def _apply_action(self, action: int) -> None:
        setup = self._setup
        node = self._node
        if node is None:
            self._seed = self._seed + (int(action),)
            if len(self._seed) == SEED_NODES:
                seed = bytes(self._seed).hex()
                state = setup.engine.new_game(setup.players, setup.options, seed)
                totals = tuple(float(t) for t in setup.engine.result(state).totals)
                self._node = _Node(setup, state, (), totals, (0.0,) * setup.players)
            return
        move = node.legal()[int(action)]
        engine, seat = setup.engine, node.player
        state = engine.apply(node.state, seat, move)
        history = node.history + (_step(setup, node.state, seat, move),)
        totals = tuple(float(t) for t in engine.result(state).totals)
        rewards = tuple(t - old for t, old in zip(totals, node.totals, strict=True))
        self._node = _Node(setup, state, history, totals, rewards)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"seed byte {action}"
        return self._setup.codec.action_name(int(action), self._setup.players, self._setup.options)

    def is_terminal(self) -> bool:
        return self._node is not None and self._node.over

    def returns(self) -> list[float]:
        node = self._node
        return [0.0] * self._setup.players if node is None else list(node.totals)

    def rewards(self) -> list[float]:
        node = self._node
        return [0.0] * self._setup.players if node is None else list(node.rewards)

    def resample_from_infostate(self, player: int, probability_sampler: Any) -> CroupierState:
        """A state with `player`'s information and the hidden cards dealt anew by the
        engine's `sample` (its randomness drawn from `probability_sampler`); the other
        players' information states are the new world's (`_world_history`)."""
        node = self._node
        if node is None:
            return self.clone()
        setup = self._setup
        rng = random.Random(int(probability_sampler() * 2**53))
        view = setup.engine.view(node.state, player)
        other = setup.engine.sample(view, rng)
        clone = self.get_game().new_initial_state()
        clone._seed = self._seed
        history = _world_history(setup, node.history, other, player)
        clone._node = _Node(setup, other, history, node.totals, node.rewards)
        return clone

    def view(self, player: int | None) -> Any:
        """The engine's view message of `player` (None: a spectator); None while dealing."""
        node = self._node
        return None if node is None else self._setup.engine.view(node.state, player)

    def __str__(self) -> str:
        node = self._node
        if node is None:
            return f"dealing: seed bytes {list(self._seed)}"
        views = (self.view(p) for p in range(self._setup.players))
        return "\n".join(text_format.MessageToString(v, as_one_line=True) for v in views)


class CroupierObserver:
    """OpenSpiel's observer: the codec's features of the player's view (or the spectator's
    view for a public-only observation type) and the view as text; for a perfect-recall type
    (the information state) also the moves of the match as the player saw them, as text and
    as one number a move (`_Node.history_codes`), which makes the tensor perfect-recall."""

    def __init__(self, setup: _Setup, iig_obs_type: Any) -> None:
        self.setup = setup
        self.perfect_recall = bool(iig_obs_type is not None and iig_obs_type.perfect_recall)
        self.public_only = bool(
            iig_obs_type is not None
            and iig_obs_type.private_info == pyspiel.PrivateInfoType.NONE
        )
        moves = setup.max_moves if self.perfect_recall else 0
        self.tensor = np.zeros(setup.size + moves, dtype=np.float32)
        self.dict = {"observation": self.tensor[:setup.size].reshape(setup.shape)}
        if moves:
            self.dict["history"] = self.tensor[setup.size:]

    def _view(self, state: CroupierState, player: int) -> Any:
        return state.view(None if self.public_only else player)

    def set_from(self, state: CroupierState, player: int) -> None:
        view = self._view(state, player)
        if view is None:
            self.tensor.fill(0.0)
            return
        setup = self.setup
        self.tensor[:setup.size] = setup.codec.observe(view, setup.players, setup.options).ravel()
        node = state._node
        if self.perfect_recall and node is not None:
            observer = setup.players if self.public_only else player
            node.history_codes(observer, self.tensor[setup.size:])

    def string_from(self, state: CroupierState, player: int) -> str:
        view = self._view(state, player)
        if view is None:
            return "dealing"
        text = text_format.MessageToString(view, as_one_line=True)
        node = state._node
        if self.perfect_recall and node is not None:
            observer = self.setup.players if self.public_only else player
            return text + "\nseen: " + node.record(observer)
        return text


def _game_type(name: str, one_deal: bool) -> pyspiel.GameType:
    """The game's OpenSpiel type: rewards only at the end (TERMINAL, as MCTS needs) when an
    episode is one deal, else at every deal's end (REWARDS)."""
    engine = get_game(name)
    defaults: dict[str, Any] = {spec.name: spec.default for spec in engine.info.options}
    defaults.update(engine.info.one_deal)
    model = pyspiel.GameType.RewardModel
    return pyspiel.GameType(
        short_name=f"croupier_{name}",
        long_name=f"Croupier {engine.info.title}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=(pyspiel.GameType.Utility.ZERO_SUM if engine.info.zero_sum
                 else pyspiel.GameType.Utility.GENERAL_SUM),
        reward_model=model.TERMINAL if one_deal else model.REWARDS,
        max_num_players=engine.info.max_players,
        min_num_players=engine.info.min_players,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification={"players": engine.info.min_players, **defaults},
    )


class CroupierGame(pyspiel.Game):
    """One Croupier game for the parameters given (players and the engine's options)."""

    game_name = ""  # set per registered subclass

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        params = dict(params or {})
        name = self.game_name
        players = params.pop("players", None)
        engine, n, options = episode_setup(name, players, params)
        self.setup = setup = _Setup.get(name, n, options)
        low, high = setup.utility
        info = pyspiel.GameInfo(
            num_distinct_actions=setup.num_actions,
            max_chance_outcomes=SEED_OUTCOMES,
            num_players=n,
            min_utility=low,
            max_utility=high,
            utility_sum=0.0 if engine.info.zero_sum else None,
            max_game_length=setup.max_moves,
        )
        super().__init__(_game_type(name, setup.one_deal), info, {"players": n, **options})

    def new_initial_state(self) -> CroupierState:
        return CroupierState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> CroupierObserver:
        if params:
            raise ValueError(f"observation parameters are not supported; got {params}")
        return CroupierObserver(self.setup, iig_obs_type)


def _register(name: str) -> type[CroupierGame]:
    engine = get_game(name)
    game_type = _game_type(name, True)
    cls = type(f"Croupier{engine.info.title.replace(' ', '')}Game", (CroupierGame,),
               {"game_name": name})
    pyspiel.register_game(game_type, cls)
    return cls


def _registered() -> set[str]:
    return {t.short_name for t in pyspiel.registered_games()}


GAMES: dict[str, type[CroupierGame]] = {}
for _name in ENGINES:
    if f"croupier_{_name}" not in _registered():
        GAMES[_name] = _register(_name)


def load(game: str, players: int | None = None, **options: Any) -> pyspiel.Game:
    """`pyspiel.load_game("croupier_<game>", ...)` with the player count and options."""
    params: dict[str, Any] = dict(options)
    if players is not None:
        params["players"] = players
    return pyspiel.load_game(f"croupier_{game}", params)
