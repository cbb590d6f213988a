"""The engines' memo tables: plain dicts that start afresh when full.

Engines and bots meet new hands for as long as a process lives, so every memo of move lists,
texts or encodings is bounded. Starting afresh beats an LRU here: a hit stays one C-level
`dict.get` of a plain dict (no reordering on every lookup; a dict subclass already costs a
fifth more per lookup), and only a miss pays for the bound. Call sites read

    moves = _CACHE.get(key)
    if moves is None:
        moves = remember(_CACHE, LIMIT, key, compute(key))
"""

from __future__ import annotations

from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


def remember(cache: dict[K, V], limit: int, key: K, value: V) -> V:
    """Stores `value` under `key`, emptying `cache` first when it holds `limit` entries, and
    returns `value`."""
    if len(cache) >= limit:
        cache.clear()
    cache[key] = value
    return value
