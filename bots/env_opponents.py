"""The built-in levels as opponents of the research environments (engines/envs/single.py).

>>> from engines.envs.single import SingleAgentEnv
>>> from engines.registry import ENGINES
>>> e = SingleAgentEnv(ENGINES[0], opponents=level_opponent("heuristic"))
>>> obs, info = e.reset(seed=1)

An opponent plays from its own seat's view, as a Croupier bot of that level does at a table
(`bots.levels.Level.choose`): the engine state never reaches it. The search levels keep
their documented budgets unless `iterations` or `seconds` says otherwise; a short budget
(e.g. `level_opponent("medium", iterations=50)`) keeps many evaluation episodes fast.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from typing import Any

from bots.levels import get_level
from engines.contract import Game


def level_opponent(
    name: str, iterations: int | None = None, seconds: float | None = None
) -> Callable[[Game, Any, random.Random], Any]:
    """An opponent callable playing the built-in level `name` (random, heuristic, easy,
    medium, hard, expert); `iterations` / `seconds` replace a search level's budget."""
    level = get_level(name)
    if level.kind == "ismcts":
        changes: dict[str, Any] = {}
        if iterations is not None:
            if iterations < 1:
                raise ValueError(f"iterations must be at least 1, not {iterations}")
            changes["iterations"] = iterations
        if seconds is not None:
            if seconds <= 0:
                raise ValueError(f"seconds must be positive, not {seconds}")
            changes["seconds"] = seconds
        level = dataclasses.replace(level, **changes)
    elif iterations is not None or seconds is not None:
        raise ValueError(f"level {name!r} does not search: it takes no budget")

    def opponent(engine: Game, view: Any, rng: random.Random) -> Any:
        move, _ = level.choose(engine, view, view.seat, rng)
        return move

    opponent.__name__ = f"level_{name}"
    return opponent
