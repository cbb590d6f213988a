"""Cheap rule-based players per game, for the `heuristic` level and as ISMCTS playouts.

A game gets one by adding `bots/heuristics/<game>.py` with `choose` (a `PlayoutPolicy`) and,
optionally, `candidates` (a `CandidateFilter` narrowing the moves worth searching),
`explains` (an `Explains`: whether this player could have made a move, the model that weighs
sampled worlds in `bots.inference`), `rewards` (a `RewardFn` scoring a played-out deal for the search, where the deal's score change
relative to the other seats misleads it) and `SEARCH_OPTIONS` (keyword arguments of
`bots.ismcts.search` measured better for this game, e.g. `policy_opponents`), `LEVEL_OPTIONS`
(the same for one level only: level name -> keyword arguments, over `SEARCH_OPTIONS`),
`HEURISTIC_PHASES` (values of the view's `phase` at which the search levels play this player's
move instead of searching) and `VERSION`
(an int, 1 if absent, raised whenever the way it plays changes, so measurements of an earlier
player are not counted as this one's).
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Sequence
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the types alone: the server's turn timer loads these players, not the search
    from bots.inference import Explains
    from bots.ismcts import CandidateFilter, PlayoutPolicy, RewardFn


def _random(game: Any, state: Any, seat: int, legal: Sequence[Any], rng: random.Random) -> Any:
    return legal[rng.randrange(len(legal))]


@cache
def _module(game_name: str) -> ModuleType | None:
    if not game_name.isidentifier():
        return None
    try:
        return importlib.import_module(f"{__name__}.{game_name}")
    except ModuleNotFoundError:
        return None


def get_candidates(game_name: str) -> CandidateFilter | None:
    """The game's filter of moves worth searching, or None to search every legal move."""
    module = _module(game_name)
    return getattr(module, "candidates", None) if module else None


def get_heuristic(game_name: str) -> PlayoutPolicy:
    """The game's rule-based player; uniform random for a game that has none yet."""
    module = _module(game_name)
    return getattr(module, "choose", _random) if module else _random


def get_reward(game_name: str) -> RewardFn | None:
    """The game's reward for searches, or None for the default (`bots.ismcts.rewards`)."""
    module = _module(game_name)
    return getattr(module, "rewards", None) if module else None


def get_explains(game_name: str) -> Explains | None:
    """The game's model of the other seats for weighing sampled worlds (`bots.inference`),
    or None where it has none."""
    module = _module(game_name)
    return getattr(module, "explains", None) if module else None


def get_search_options(game_name: str, level: str | None = None) -> dict[str, Any]:
    """The game's own settings of `bots.ismcts.search` (none: the defaults), with those of
    `level` if the game has some for it."""
    module = _module(game_name)
    if module is None:
        return {}
    return {**getattr(module, "SEARCH_OPTIONS", {}), **get_level_options(game_name, level)}


def get_level_options(game_name: str, level: str | None) -> dict[str, Any]:
    """The game's settings of `bots.ismcts.search` for one level only (see LEVEL_OPTIONS)."""
    module = _module(game_name)
    return dict(getattr(module, "LEVEL_OPTIONS", {}).get(level, {})) if module else {}


def get_version(game_name: str) -> int:
    """The version of the game's heuristic player (1 if it never changed its play)."""
    module = _module(game_name)
    return int(getattr(module, "VERSION", 1)) if module else 1


def get_heuristic_phases(game_name: str) -> tuple[Any, ...]:
    """The phases (of the view's `phase`) whose decisions the search levels leave to the game's
    heuristic player; empty: every decision is searched."""
    module = _module(game_name)
    return tuple(getattr(module, "HEURISTIC_PHASES", ())) if module else ()
