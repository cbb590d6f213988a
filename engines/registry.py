"""The games the service offers, by name."""

from __future__ import annotations

import importlib

from engines.contract import Game

# one package per game under engines/, each exporting GAME
ENGINES = ("dou_dizhu", "doppelkopf", "dobro", "dos", "sobe_e_desce")


def _load() -> dict[str, Game]:
    games = (importlib.import_module(f"engines.{name}").GAME for name in ENGINES)
    return {g.info.name: g for g in games}


GAMES: dict[str, Game] = _load()


def get_game(name: str) -> Game:
    """The engine called `name`; ValueError listing the known games otherwise."""
    try:
        return GAMES[name]
    except KeyError:
        raise ValueError(f"unknown game {name!r}; known games: {', '.join(sorted(GAMES))}") from None
