"""The games the service offers, by name."""

from __future__ import annotations

from engines.contract import Game


def _load() -> dict[str, Game]:
    from engines.dou_dizhu import GAME as dou_dizhu
    from engines.sobe_e_desce import GAME as sobe_e_desce

    return {g.info.name: g for g in (dou_dizhu, sobe_e_desce)}


GAMES: dict[str, Game] = _load()


def get_game(name: str) -> Game:
    """The engine called `name`; ValueError listing the known games otherwise."""
    try:
        return GAMES[name]
    except KeyError:
        raise ValueError(f"unknown game {name!r}; known games: {', '.join(sorted(GAMES))}") from None
