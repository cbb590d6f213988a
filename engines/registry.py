"""The games the service offers, by name."""

from __future__ import annotations

from engines.contract import Game


def _load() -> dict[str, Game]:
    from engines.dos import GAME as dos
    from engines.dou_dizhu import GAME as dou_dizhu

    return {g.info.name: g for g in (dou_dizhu, dos)}


GAMES: dict[str, Game] = _load()


def get_game(name: str) -> Game:
    """The engine called `name`; ValueError listing the known games otherwise."""
    try:
        return GAMES[name]
    except KeyError:
        raise ValueError(f"unknown game {name!r}; known games: {', '.join(sorted(GAMES))}") from None
