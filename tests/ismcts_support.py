"""Search test helpers: states met in random play."""

from __future__ import annotations

import random
from typing import Any

from engines.registry import GAMES
from tests.engine_kit import SETUPS, RandomPlay


def random_states(name: str, count: int, seed: int) -> list[tuple[Any, list[int]]]:
    """States along random games of the engine, with the seats to act."""
    game, setup = GAMES[name], SETUPS[name][0]
    rng = random.Random(seed)
    out: list[tuple[Any, list[int]]] = []
    g = 0
    while len(out) < count:
        walk = RandomPlay(game, game.new_game(setup.players, setup.options, f"bots/{g}"), rng)
        g += 1
        for state, _, _ in walk:
            if rng.random() < 0.3:
                out.append((state, sorted(game.to_act(state))))
    return out[:count]
