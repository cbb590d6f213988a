"""The codec of each game, by engine name (imported on first use)."""

from __future__ import annotations

import importlib

from engines.envs.codec import Codec
from engines.registry import ENGINES

_CODECS: dict[str, Codec] = {}


def get_codec(game: str) -> Codec:
    """The codec of `game` (module engines.envs.<game>, exporting CODEC); ValueError if none."""
    if game not in ENGINES:
        raise ValueError(f"unknown game {game!r}; known games: {', '.join(ENGINES)}")
    codec = _CODECS.get(game)
    if codec is None:
        codec = importlib.import_module(f"engines.envs.{game}").CODEC
        _CODECS[game] = codec
    return codec
