"""Determinizations weighted by how well they explain the other seats' moves.

The engine's `sample` deals the hidden cards uniformly among the arrangements the view
allows, so a world in which a seat that bid 3 holds no high card counts as much as one in
which it holds both jokers. Policy-based inference (as in Rebstock et al., 2019, for Skat)
reads the others' moves back through a model of how they play: a pool of uniform worlds is
sampled, each world's deal is replayed (`Game.replay`) and every move of another seat that
the model (a game's `explains`, the heuristic player's choices) would not have made in that
world multiplies the world's weight by `epsilon`. The search then draws its determinizations
from the pool by weight. `epsilon` near 1 is the uniform dealing; near 0 it trusts the model
as if the others were the heuristic player.

>>> import random
>>> from bots.heuristics import get_explains
>>> from engines.registry import ENGINES, GAMES
>>> name = next(g for g in ENGINES if get_explains(g))
>>> game = GAMES[name]
>>> s = game.new_game(game.info.min_players, {}, seed="doc")
>>> for _ in range(3):
...     seat = min(game.on_turn(s))
...     s = game.apply(s, seat, game.legal_moves(s, seat)[-1])
>>> seat = min(game.on_turn(s))
>>> pool = Worlds(game, game.view(s, seat), seat, random.Random(3), get_explains(name), count=100,
...               epsilon=0.2)
>>> len(pool.worlds)
100
>>> game.view(pool(random.Random(4)), seat) == game.view(s, seat)
True
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from itertools import accumulate
from typing import Any

from engines.contract import Game

Explains = Callable[[Game, Any, int, Sequence[Any], Any], bool]
"""(game, state, seat, legal moves, move) -> whether the model could have made that move."""


def surprises(game: Game, world: Any, seat: int, explains: Explains) -> int | None:
    """How many moves of the seats other than `seat` in this deal the model would not have
    made with the hidden cards of `world` (None: the game cannot replay its deals). Moves
    that were the only legal one say nothing and are not counted."""
    steps = game.replay(world)
    if steps is None:
        return None
    count = 0
    for state, s, move in steps:
        if s == seat:
            continue
        legal = game.legal_moves(state, s)
        if len(legal) > 1 and not explains(game, state, s, legal, move):
            count += 1
    return count


class Worlds:
    """A pool of sampled worlds, each weighted `epsilon ** surprises`; calling it with an rng
    draws one by weight, in place of `game.sample(view, rng)`."""

    def __init__(
        self,
        game: Game,
        view: Any,
        seat: int,
        rng: random.Random,
        explains: Explains,
        count: int,
        epsilon: float,
    ) -> None:
        if not 0.0 < epsilon <= 1.0:
            raise ValueError(f"epsilon must be in (0, 1], got {epsilon}")
        self.worlds = [game.sample(view, rng) for _ in range(count)]
        self.surprises = [surprises(game, w, seat, explains) or 0 for w in self.worlds]
        least = min(self.surprises)  # relative weights: the likeliest world weighs 1
        self.weights = [epsilon ** (k - least) for k in self.surprises]
        self._cum = list(accumulate(self.weights))

    @property
    def effective_size(self) -> float:
        """Kish's effective sample size of the weights: how many equally weighted worlds the
        pool is worth (the pool's size when every world explains the moves equally well)."""
        total = self._cum[-1]
        return total * total / sum(w * w for w in self.weights)

    def __call__(self, rng: random.Random) -> Any:
        return rng.choices(self.worlds, cum_weights=self._cum)[0]
