"""Table logic, independent of gRPC: seats, tokens, moves, events.

Every change is validated completely before anything is written, then committed as one
compare-and-set on the table version together with its events; so an error never changes a
table, and two writers (in this process or another one sharing the store) never both win.
Inside a process a per-table lock serialises writers, so conflicts there only come from
clients holding a stale version or from other processes.

Nothing is dealt until every seat is taken: a table keeps its secret seed and deals from it
when the last seat is taken, so no seat (and no client hopping from seat to seat) sees a card
before play starts. A table no person has been at for a while is closed as abandoned
(`close_abandoned`); presence is kept as a last-seen time that calls with a person's seat
token raise, written at most every `AbandonPolicy.presence_every` seconds and without a new
version.

`Tables` is the one entry the server uses; its jobs are modules of their own, each a layer on
the one below: `table_base` (store, locks, the commit), `seats` (tokens, join, leave, presence),
`moves` (moves, retries, budgets), `clock` (fill, turn timers, abandonment), with
`validation` (request limits and checks) and `table_errors` beside them. Creating and listing
tables (with its page tokens) are here.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from common.level_names import LEVEL_NAMES
from common.logging import get_logger
from service.abandon_policy import AbandonPolicy
from service.clock import TableClock
from service.model import (
    RATED_OPTION,
    Event,
    EventKind,
    Status,
    TableFilter,
    TableRecord,
)
from service.moves import MoveOutcome
from service.reasons import Reason
from service.store import TableExists
from service.table_errors import Code, TableError
from service.validation import (
    MAX_BOT_LEVEL_CHARS,
    SeatRequest,
    check_create,
    check_entrant,
    reserve_seats,
)

# the one entry the server uses: Tables, what it is built with, and what it answers
__all__ = ["AbandonPolicy", "Code", "MoveOutcome", "SeatRequest", "TableError", "Tables"]

log = get_logger("croupier.tables")  # a table's start and end: the console's lines per table


MAX_LIST_LIMIT = 500
DEFAULT_LIST_LIMIT = 100
MAX_PAGE_TOKEN_CHARS = 512
PAGE_TOKEN_VERSION = 1
MAX_LIST_ENTRANTS = 16


class Tables(TableClock):
    """Every table request the server makes, one object: validation, seats, moves and
    the clock are its layers (service.validation, .seats, .moves, .clock); creating and
    listing tables are its own."""

    # --- create -------------------------------------------------------------------------
    async def create(
        self,
        game_name: str,
        players: int,
        options: Mapping[str, Any],
        seats: Sequence[SeatRequest] = (),
        fill_with_bots_after_seconds: float = 0.0,
        fill_level: str = "",
        player_ids: Sequence[str] = (),
        rated: bool = False,
    ) -> TableRecord:
        """A new table under a fresh id, its request checked whole first (`check_create`).
        `player_ids[i]` reserves seat i for that player; `rated` (matchmaking's, never a
        client's) makes its end rate its players."""
        game = self.game(game_name)
        if rated:
            options = {**options, RATED_OPTION: True}
        new = check_create(game, players, options, seats, fill_with_bots_after_seconds, fill_level)
        if player_ids:
            new = replace(new, seats=reserve_seats(new.seats, player_ids))
        now = self.clock()
        for _ in range(5):
            record = TableRecord(
                table_id=secrets.token_hex(8),
                game=game.info.name,
                players=new.players,
                options=new.options,
                seats=new.seats,
                status=Status.WAITING,
                version=1,
                state=b"",  # dealt when the last seat is taken
                created_at=now,
                fill_with_bots_after_seconds=fill_with_bots_after_seconds,
                fill_level=new.fill_level,
                seed=new.seed,
                seen_at=now,
            )
            event = Event(
                table_id=record.table_id,
                version=1,
                kind=EventKind.CREATED,
                seat=-1,
                move="",
                name="",
                time=now,
                state=record.state,
                seats=record.seats,
                status=record.status,
            )
            try:
                await self.store.create(record, [event])
            except TableExists:
                continue  # 64 random bits collided; draw again
            log.info(
                "table_created",
                table=record.table_id,
                game=record.game,
                seats=[s.kind.value for s in record.seats],
            )
            return record
        raise RuntimeError("could not draw a free table id")
    # --- reading ------------------------------------------------------------------------
    async def list(
        self,
        game: str = "",
        status: Status | None = None,
        waiting_for_bot: bool = False,
        limit: int = 0,
        bot_levels: Sequence[str] = (),
        include_private: bool = False,
        page_token: str = "",
        include_abandoned: bool = False,
        entrants: Sequence[str] = (),
    ) -> tuple[list[TableRecord], str]:
        """Tables by filter, one page, and the token of the next page ("" after the last);
        private ones only with `include_private` (the server grants it to bot workers looking
        for seats: a private table's bot seats need players too); tables closed as abandoned
        only with `include_abandoned` or when `status` asks for them. Waiting for a bot with
        neither `bot_levels` nor `entrants`: a seat of any built-in level (what a bot worker
        may take), never an outside entrant's."""
        if limit < 0:
            raise TableError(
                Code.INVALID_ARGUMENT, "limit may not be negative",
                reason=Reason.INVALID_ARGUMENT_FIELD, meta={"field": "limit"},
            )
        if limit > MAX_LIST_LIMIT:
            raise TableError(
                Code.RESOURCE_EXHAUSTED,
                f"at most {MAX_LIST_LIMIT} tables per request; asked for {limit}",
                reason=Reason.TOO_LARGE, meta={"field": "limit", "max": MAX_LIST_LIMIT},
            )
        if bot_levels and not waiting_for_bot:
            raise TableError(
                Code.INVALID_ARGUMENT, "bot_levels filters the tables waiting for a bot: "
                "set waiting_for_bot too",
                reason=Reason.INVALID_ARGUMENT_FIELD, meta={"field": "bot_levels"},
            )
        if len(bot_levels) > len(LEVEL_NAMES):
            raise TableError(
                Code.RESOURCE_EXHAUSTED, f"at most {len(LEVEL_NAMES)} bot levels; got {len(bot_levels)}",
                reason=Reason.TOO_LARGE, meta={"field": "bot_levels", "max": len(LEVEL_NAMES)},
            )
        unknown = [level for level in bot_levels if level not in LEVEL_NAMES]
        if unknown:
            raise TableError(
                Code.INVALID_ARGUMENT,
                f"unknown bot level {unknown[0][:MAX_BOT_LEVEL_CHARS]!r}; levels: "
                f"{', '.join(LEVEL_NAMES)}",
                reason=Reason.INVALID_ARGUMENT_BOT_LEVEL,
            )
        if entrants and not waiting_for_bot:
            raise TableError(
                Code.INVALID_ARGUMENT, "entrants filters the tables waiting for a bot: "
                "set waiting_for_bot too",
                reason=Reason.INVALID_ARGUMENT_FIELD, meta={"field": "entrants"},
            )
        if len(entrants) > MAX_LIST_ENTRANTS:
            raise TableError(
                Code.RESOURCE_EXHAUSTED,
                f"at most {MAX_LIST_ENTRANTS} entrants; got {len(entrants)}",
                reason=Reason.TOO_LARGE, meta={"field": "entrants", "max": MAX_LIST_ENTRANTS},
            )
        for entrant in entrants:
            check_entrant(entrant)
        wanted = set(bot_levels) | set(entrants)
        if game:
            self.game(game)  # an unknown game is a mistake worth saying, not an empty list
        # a page token holds the last table's place in the order, and says which filters it
        # was given for: a token used with other filters would skip tables silently
        filters = [game, status.value if status else "", waiting_for_bot,
                   sorted(set(bot_levels)), include_private]
        if include_abandoned:  # (tokens given before this filter existed still serve)
            filters.append(True)
        if entrants:
            filters.append(sorted(set(entrants)))
        scope = hashlib.sha256(json.dumps(filters).encode()).hexdigest()[:16]
        page = limit or DEFAULT_LIST_LIMIT
        flt = TableFilter(
            game=game,
            status=status,
            bot_open_before=self.clock() if waiting_for_bot else None,
            bot_levels=frozenset(wanted or LEVEL_NAMES) if waiting_for_bot else None,
            public_only=not include_private,
            hide_abandoned=status is None and not include_abandoned,
            after=self._read_page_token(page_token, scope) if page_token else None,
            limit=page + 1,  # one more than asked: is there a next page?
        )
        records = await self.store.list(flt)
        if len(records) <= page:
            return records, ""
        records = records[:page]
        at, last = flt.order_key(records[-1])
        token = json.dumps([PAGE_TOKEN_VERSION, scope, at, last], separators=(",", ":"))
        return records, base64.urlsafe_b64encode(token.encode()).decode()
    @staticmethod
    def _read_page_token(token: str, scope: str) -> tuple[float, str]:
        wrong = TableError(
            Code.INVALID_ARGUMENT,
            "page_token is not one this server gave for these filters: send the "
            "next_page_token of the previous reply, with the same game, status, "
            "waiting_for_bot, bot_levels, entrants and include_abandoned",
            reason=Reason.INVALID_ARGUMENT_FIELD, meta={"field": "page_token"},
        )
        if len(token) > MAX_PAGE_TOKEN_CHARS:
            raise wrong
        try:
            version, given, at, last = json.loads(base64.urlsafe_b64decode(token.encode()))
        except (ValueError, TypeError):
            raise wrong from None
        if (version != PAGE_TOKEN_VERSION or given != scope or not isinstance(last, str)
                or not isinstance(at, int | float) or isinstance(at, bool)
                or not math.isfinite(at)):
            raise wrong
        return float(at), last
