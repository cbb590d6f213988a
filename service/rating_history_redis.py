"""The Redis store's rating history and names (`service.rating_history`).

Keys (never expire, as the ladders): `<prefix>lad:h:<ladder>:<game>/<entrant>`, a list of the
entrant's points as JSON, oldest first, trimmed to MAX_HISTORY; `<prefix>lad:n:<ladder>`, a
hash entrant -> display name. `RedisStore.rate` queues the writes inside its MULTI, so they
land in the same EXEC as the ratings or not at all."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from service.model import RatedMatch, Rating
from service.rating_history import MAX_HISTORY, RatingPoint, history_points, match_names


def history_key(prefix: str, ladder: str, game: str, entrant: str) -> str:
    # ladder and game names hold no ':' or '/': the entrant, last, may hold anything
    return f"{prefix}lad:h:{ladder}:{game}/{entrant}"


def names_key(prefix: str, ladder: str) -> str:
    return f"{prefix}lad:n:{ladder}"


def queue_history(pipe: Any, prefix: str, match: RatedMatch, new: Sequence[Rating]) -> None:
    """The match's points and names as commands of the caller's MULTI."""
    for r, p in history_points(match, new):
        key = history_key(prefix, r.ladder, r.game, r.entrant)
        pipe.rpush(key, json.dumps(p.to_json()))
        pipe.ltrim(key, -MAX_HISTORY, -1)
    names = match_names(match)
    if names:
        pipe.hset(names_key(prefix, match.ladder), mapping=names)


async def read_history(redis: Any, prefix: str, ladder: str, game: str, entrant: str,
                       limit: int) -> list[RatingPoint]:
    if limit <= 0:
        return []
    found = await redis.lrange(history_key(prefix, ladder, game, entrant), -limit, -1)
    return [RatingPoint.from_json(json.loads(v)) for v in found]


async def read_names(redis: Any, prefix: str, ladder: str, entrants: Sequence[str]
                     ) -> dict[str, str]:
    wanted = list(dict.fromkeys(entrants))
    if not wanted:
        return {}
    found = await redis.hmget(names_key(prefix, ladder), wanted)
    return {e: v.decode() for e, v in zip(wanted, found, strict=True) if v is not None}
