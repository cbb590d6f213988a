"""Cheap rule-based players per game, for the `heuristic` level and as ISMCTS playouts."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from bots.ismcts import CandidateFilter, PlayoutPolicy


def _random(game: Any, state: Any, seat: int, legal: Sequence[Any], rng: random.Random) -> Any:
    return legal[rng.randrange(len(legal))]


def get_candidates(game_name: str) -> CandidateFilter | None:
    """The game's filter of moves worth searching, or None to search every legal move."""
    if game_name == "dou_dizhu":
        from bots.heuristics.dou_dizhu import candidates

        return candidates
    return None


def get_heuristic(game_name: str) -> PlayoutPolicy:
    """The game's rule-based player; uniform random for a game that has none yet."""
    if game_name == "dou_dizhu":
        from bots.heuristics.dou_dizhu import choose

        return choose
    return _random
