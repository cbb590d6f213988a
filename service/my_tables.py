"""A player's own tables (ListMyTables): the unfinished ones, and with `include_finished` those
that closed within the server's window (7 days by default), newest first and paged.

A table is the player's when one of its seats names them (Seat.player: bound when they took it
with an identity, or reserved for them at creation); each store keeps an index from players to
tables (`Store.player_tables`). Page tokens are ListTables' kind: the last table's place in the
order and a digest of the filters they were given for, so a token never serves other filters,
nor another player.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
from dataclasses import dataclass

from service import views
from service.model import TableRecord
from service.player_index import order_key, seat_of
from service.presence import Presence
from service.reasons import Reason
from service.tables import PAGE_TOKEN_VERSION, Code, TableError, Tables

DEFAULT_LIMIT = 20
MAX_LIMIT = 100
FINISHED_WITHIN_SECONDS = 7 * 86_400


@dataclass(frozen=True)
class MyTable:
    record: TableRecord
    seat: int  # the player's (first) seat
    acting: list[int]  # the seats that may move now
    presence: list[Presence]

    @property
    def my_turn(self) -> bool:
        return self.seat in self.acting


def _scope(player_id: str, game: str, include_finished: bool) -> str:
    filters = ["mine", player_id, game, include_finished]
    return hashlib.sha256(json.dumps(filters).encode()).hexdigest()[:16]


def _read_token(token: str, scope: str) -> tuple[float, str]:
    try:
        return Tables._read_page_token(token, scope)
    except TableError:
        raise TableError(
            Code.INVALID_ARGUMENT,
            "page_token is not one this server gave you for these filters: send the "
            "next_page_token of the previous ListMyTables reply, with the same game and "
            "include_finished",
            reason=Reason.INVALID_ARGUMENT_FIELD, meta={"field": "page_token"},
        ) from None


async def my_tables(
    tables: Tables,
    player_id: str,
    game: str = "",
    limit: int = 0,
    page_token: str = "",
    include_finished: bool = False,
    finished_within: float = FINISHED_WITHIN_SECONDS,
) -> tuple[list[MyTable], str]:
    """One page of the player's tables and the next page's token ("" after the last)."""
    if limit < 0:
        raise TableError(
            Code.INVALID_ARGUMENT, "limit may not be negative",
            reason=Reason.INVALID_ARGUMENT_FIELD, meta={"field": "limit"},
        )
    if limit > MAX_LIMIT:
        raise TableError(
            Code.RESOURCE_EXHAUSTED, f"at most {MAX_LIMIT} tables per request; asked for {limit}",
            reason=Reason.TOO_LARGE, meta={"field": "limit", "max": MAX_LIMIT},
        )
    if game:
        tables.game(game)  # an unknown game is a mistake worth saying, not an empty list
    scope = _scope(player_id, game, include_finished)
    after = _read_token(page_token, scope) if page_token else None
    page = limit or DEFAULT_LIMIT
    closed_since = tables.clock() - finished_within if include_finished else None
    records = await tables.store.player_tables(
        player_id, after=after, limit=page + 1, closed_since=closed_since, game=game
    )
    token = ""
    if len(records) > page:
        records = records[:page]
        at, last = order_key(records[-1])
        text = json.dumps([PAGE_TOKEN_VERSION, scope, at, last], separators=(",", ":"))
        token = base64.urlsafe_b64encode(text.encode()).decode()
    presences = await asyncio.gather(
        *(tables.presence.current(r.table_id, r.seats) for r in records)
    )
    out = []
    for record, presence in zip(records, presences, strict=True):
        seat = seat_of(record, player_id)
        assert seat is not None  # the store lists only the player's tables
        g = tables.game(record.game)
        acting = views.to_act(g, record, views.state_of(g, record))
        out.append(MyTable(record, seat, acting, presence))
    return out, token
