"""Bot policies: given a seat's TableView, pick one of its legal moves.

A policy sees exactly what the server sends that seat (the TableView with its legal moves in
canonical notation) and answers a move in the same notation, so any frontend could play it.
Levels are looked up by name in `LEVELS`; search-based levels (ISMCTS) plug in there and
reach the engine's view through `engine_view`.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import structlog
from croupier.v1 import croupier_pb2

from bots.levels import LEVELS as BOT_LEVELS
from bots.levels import Level

if TYPE_CHECKING:
    from engines.contract import Game

log = structlog.get_logger("croupier.bots.policy")

DEFAULT_LEVEL = "random"


class Policy(Protocol):
    """Chooses a move for the seat whose view it is given."""

    name: str
    # True for searches: the worker then runs `choose` in a thread so its other tables' streams
    # keep flowing while it thinks.
    cpu_bound: bool

    def choose(self, view: croupier_pb2.TableView, rng: random.Random) -> str:
        """One of `view.legal_moves`, in canonical notation."""
        ...


class RandomPolicy:
    """Uniform over the legal moves: the baseline every other level must beat."""

    name = "random"
    cpu_bound = False

    def choose(self, view: croupier_pb2.TableView, rng: random.Random) -> str:
        if not view.legal_moves:
            raise ValueError("no legal moves in this view: the seat is not to act")
        return rng.choice(list(view.legal_moves))


class LevelPolicy:
    """A named level of `bots.levels` (heuristic or ISMCTS) playing from the seat's engine view."""

    def __init__(self, level: Level) -> None:
        self.level = level
        self.name = level.name
        self.cpu_bound = level.kind == "ismcts"
        self.last_iterations = 0

    def choose(self, view: croupier_pb2.TableView, rng: random.Random) -> str:
        if not view.legal_moves:
            raise ValueError("no legal moves in this view: the seat is not to act")
        game, seat_view = engine_view(view)
        move, stats = self.level.choose(game, seat_view, view.seat, rng)
        self.last_iterations = stats.iterations if stats is not None else 0
        return game.format_move(move)


def _level_factory(level: Level) -> Callable[[], Policy]:
    return lambda: LevelPolicy(level)


# Level name -> factory. The worker builds one policy per seat it claims.
LEVELS: dict[str, Callable[[], Policy]] = {"random": RandomPolicy}
LEVELS.update({name: _level_factory(lv) for name, lv in BOT_LEVELS.items() if name != "random"})


def get_policy(level: str) -> Policy:
    """The policy of `level`; an unknown level plays random (with a warning) rather than stall."""
    factory = LEVELS.get(level or DEFAULT_LEVEL)
    if factory is None:
        log.warning("unknown_bot_level", bot_level=level, fallback=DEFAULT_LEVEL, known=sorted(LEVELS))
        factory = LEVELS[DEFAULT_LEVEL]
    return factory()


def engine_view(view: croupier_pb2.TableView) -> tuple[Game, Any]:
    """The table's engine and the seat's game-specific view message, for search policies.

    Imported lazily so random bots need no engine code at all.
    """
    from engines.registry import get_game

    game = get_game(view.table.game)
    return game, getattr(view.view, game.info.view_field)
