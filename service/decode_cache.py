"""Decoded engine states, cached by their bytes.

Decoding replays a deal's history, which costs more than the rest of a move; every GetView and
SubmitMove would otherwise decode the same bytes again. Keyed by the bytes themselves, the
cache can never serve a wrong state, whatever writes other processes make. Engines never
mutate states, so sharing one decoded object between readers is safe.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from engines.contract import Game

MAX_STATES = 4096

_cache: OrderedDict[tuple[str, bytes], Any] = OrderedDict()


def decode(game: Game, data: bytes) -> Any:
    key = (game.info.name, data)
    state = _cache.get(key)
    if state is None:
        state = game.decode(data)
        remember(game, data, state)
    else:
        _cache.move_to_end(key)
    return state


def remember(game: Game, data: bytes, state: Any) -> None:
    """Primes the cache with a state whose bytes the caller just encoded."""
    _cache[(game.info.name, data)] = state
    _cache.move_to_end((game.info.name, data))
    while len(_cache) > MAX_STATES:
        _cache.popitem(last=False)
