"""What one episode of each game is, shared by the PettingZoo and OpenSpiel environments.

An episode is one match of the given options. By default it is a one-deal match where the
game has an option for it, so that an episode is one deal (the unit a bot searches and a
learner is rewarded for); options given explicitly override these.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engines.contract import Game, check_options
from engines.registry import get_game

# the option that makes a match one deal, per game
ONE_DEAL: dict[str, dict[str, Any]] = {
    "dou_dizhu": {"deals": 1},
    "doppelkopf": {"deals": 1},
    "dobro": {"rounds": 1},
    "dos": {"target": 1},  # every round gives its winner a point: the first ends the match
    "sobe_e_desce": {"max_deals": 1},
}


def episode_setup(
    game: str, players: int | None, options: Mapping[str, Any] | None
) -> tuple[Game, int, dict[str, Any]]:
    """The engine, the player count (default: the game's smallest table) and the full
    options (one-deal defaults under the given ones); ValueError on bad ones."""
    engine = get_game(game)
    n = engine.info.min_players if players is None else players
    if isinstance(n, bool) or not isinstance(n, int):
        raise ValueError(f"players must be an integer, got {n!r}")
    if not engine.info.min_players <= n <= engine.info.max_players:
        raise ValueError(
            f"{engine.info.title} is played by {engine.info.min_players} to "
            f"{engine.info.max_players} players, not {n}"
        )
    merged = {**ONE_DEAL.get(game, {}), **(options or {})}
    return engine, n, check_options(engine.info.options, merged)
