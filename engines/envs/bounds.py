"""What the rules bound in an episode: its returns and its number of moves, per game and options.

OpenSpiel asks every game for its utility range and its longest game; search and learning code
scales values and sizes buffers by them. Each game derives them from its rules (seeds/) as the
tightest simple bounds that hold for every play, with its reasoning, in its own package
(`GameInfo.bounds`); these read them. The tests play random matches and check no episode
leaves them, and that they stay within a small factor of what play reaches.

Moves are those the environments offer (the acting seat's, out-of-turn calls excepted).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engines.contract import Bounds
from engines.registry import get_game


def bounds(game: str, players: int, options: Mapping[str, Any]) -> Bounds:
    """The game's bounds for a match of these (full) options; ValueError if it states none."""
    engine = get_game(game)
    if engine.info.bounds is None:
        raise ValueError(f"no bounds for game {game!r}: its GameInfo states none")
    return engine.info.bounds(players, options)


def max_deals(game: str, players: int, options: Mapping[str, Any]) -> int:
    """The most deals (rounds) a match of these options plays: 1 makes an episode one deal,
    whose rewards all come at its end."""
    return bounds(game, players, options).deals


def utility_bounds(game: str, players: int, options: Mapping[str, Any]) -> tuple[float, float]:
    """(min, max) of any seat's return (its match total) for a match of these options."""
    b = bounds(game, players, options)
    return b.lowest, b.highest


def max_moves(game: str, players: int, options: Mapping[str, Any]) -> int:
    """The most moves (decisions, chance excluded) a match of these options can take."""
    return bounds(game, players, options).moves


def zero_sum(game: str) -> bool:
    """Whether the game's match totals always sum to zero."""
    return get_game(game).info.zero_sum
