"""Checks every codec must pass, shared by the codec tests of all games.

A codec is only as good as the weakest state it meets, so the checks run over random play
(every seat that may act, in turn or not, and every legal move) rather than over a few
hand-picked states:

- `check_actions`: each seat's legal moves get distinct actions in [0, num_actions), the
  same moves get the same actions in a state sampled from that seat's view (an action that
  depends on hidden cards would leak them through the mask), and every action has a name;
- `check_observation`: the observation has the codec's fixed shape, is float32 and finite,
  and is the same for another full state with the same view (`game.sample`);
- `check_codec`: both over whole random matches, for the tests' seeds.

Lives in the package (not tests/) so that the codec tests of every game import one copy.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from engines.contract import Game
from engines.envs.codec import Codec
from engines.registry import get_game


def random_states(
    game: Game, players: int, options: Mapping[str, Any], seed: str, rng: random.Random,
    max_moves: int = 5_000,
) -> Iterator[Any]:
    """The states of one random match (the final one included): each move by a random seat
    of `to_act`, so out-of-turn moves (calls, catches) are exercised too."""
    state = game.new_game(players, options, seed)
    yield state
    for _ in range(max_moves):
        seats = sorted(game.to_act(state))
        if not seats:
            return
        seat = rng.choice(seats)
        moves = game.legal_moves(state, seat)
        if not moves:
            continue
        state = game.apply(state, seat, rng.choice(list(moves)))
        yield state


def legal_actions(codec: Codec, game: Game, state: Any, seat: int) -> dict[int, str]:
    """`seat`'s legal moves by action (in notation); AssertionError if two share one."""
    out: dict[int, str] = {}
    for move in game.legal_moves(state, seat):
        action = codec.action(state, seat, move)
        text = game.format_move(move)
        assert isinstance(action, int), f"action of {text!r} is {type(action).__name__}, not int"
        assert action not in out, f"{text!r} and {out.get(action)!r} share action {action}"
        out[action] = text
    return out


def check_actions(
    codec: Codec, game: Game, state: Any, players: int, options: Mapping[str, Any],
    rng: random.Random,
) -> None:
    """Distinct in-range actions for every seat that may act, the same ones in a world
    sampled from its view, and a name for each."""
    n = codec.num_actions(players, options)
    for seat in sorted(game.to_act(state)):
        actions = legal_actions(codec, game, state, seat)
        for action, text in actions.items():
            assert 0 <= action < n, f"{text!r} maps to {action}, outside [0, {n})"
            name = codec.action_name(action, players, options)
            assert isinstance(name, str) and name, f"action {action} has no name"
        other = game.sample(game.view(state, seat), rng)
        assert legal_actions(codec, game, other, seat) == actions, (
            f"seat {seat}'s actions differ in a state with the same view: they depend on "
            "cards it cannot see"
        )


def check_observation(
    codec: Codec, game: Game, state: Any, players: int, options: Mapping[str, Any],
    rng: random.Random,
) -> None:
    """Fixed shape, float32, finite, and equal for another state with the same view."""
    shape = tuple(codec.observation_shape(players, options))
    for seat in range(players):
        view = game.view(state, seat)
        obs = codec.observe(view, players, options)
        assert isinstance(obs, np.ndarray), f"observe gave {type(obs).__name__}"
        assert obs.dtype == np.float32, f"observation dtype {obs.dtype}, not float32"
        assert obs.shape == shape, f"observation shape {obs.shape}, declared {shape}"
        assert np.isfinite(obs).all(), "observation has NaN or infinite values"
        other_view = game.view(game.sample(view, rng), seat)
        other = codec.observe(other_view, players, options)
        assert np.array_equal(obs, other), (
            f"seat {seat}'s observation differs in a state with the same view (features "
            f"{np.flatnonzero(obs != other)[:10].tolist()}...)"
        )


def check_codec(
    codec: Codec, players: int, options: Mapping[str, Any], seeds: list[str],
    every: int = 1, max_moves: int = 5_000,
) -> int:
    """Both checks on every `every`-th state of one random match per seed; the number of
    states checked (so a test can assert it saw some)."""
    game = get_game(codec.game)
    n = codec.num_actions(players, options)
    assert isinstance(n, int) and n > 0, f"num_actions is {n!r}"
    for a in (0, n - 1):
        assert codec.action_name(a, players, options), f"action {a} has no name"
    checked = 0
    for seed in seeds:
        rng = random.Random(seed)
        for i, state in enumerate(random_states(game, players, options, seed, rng, max_moves)):
            if i % every:
                continue
            check_actions(codec, game, state, players, options, rng)
            check_observation(codec, game, state, players, options, rng)
            checked += 1
    return checked
