"""What a game gives the research environments: a fixed action space and a numeric view.

The environments (PettingZoo, OpenSpiel) are generic over the engine contract; each game adds
a `Codec`, so that a learner sees a `Discrete(num_actions)` space with a mask of the legal
moves and a fixed-shape float32 observation of the seat's view, while the rules stay the
engine's own: nothing here decides what is legal.

The codec maps moves to actions only. Going back is generic: the environment encodes the
seat's legal moves and takes the one with the chosen action, so every legal move of a state
must get an action of its own (the shared tests check this over random play).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np


class Codec(Protocol):
    """One game's action space and observation encoding, for given players and options."""

    game: str  # the engine's name (engines.registry)

    def num_actions(self, players: int, options: Mapping[str, Any]) -> int:
        """The size of the Discrete action space: fixed for a player count and options."""
        ...

    def action(self, state: Any, seat: int, move: Any) -> int:
        """The action of one of `seat`'s legal moves in `state`, in [0, num_actions)."""
        ...

    def action_name(self, action: int, players: int, options: Mapping[str, Any]) -> str:
        """What the action means, in words or in the game's notation (docs, render, logs)."""
        ...

    def observation_shape(self, players: int, options: Mapping[str, Any]) -> tuple[int, ...]:
        """The shape of `observe`'s array: fixed for a player count and options."""
        ...

    # A game whose engine `redact`s moves (hides part of them from other seats) adds
    # `seen_action(state, seat, move, observer) -> int`: the action standing for the move as
    # `observer` (None: a spectator) sees it, the same for every move that looks the same to
    # it; OpenSpiel's information-state tensor records the moves so (engines/envs/spiel.py).

    def observe(self, view: Any, players: int, options: Mapping[str, Any]) -> np.ndarray:
        """The seat's view message (engine.view(state, seat)) as float32 features, laid out
        as the game's codec module documents."""
        ...
