"""What one episode of each game is, shared by the PettingZoo and OpenSpiel environments.

An episode is one match of the given options. By default it is a one-deal match where the
game has an option for it (`GameInfo.one_deal`), so that an episode is one deal (the unit a
bot searches and a learner is rewarded for); options given explicitly override these.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engines.contract import Game, canonical_options, check_options
from engines.registry import get_game


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
    given = canonical_options(engine.info.options, options or {})
    merged = {**engine.info.one_deal, **given}
    return engine, n, check_options(engine.info.options, merged)
