"""Seats and tokens: who holds which seat (a token's hash, compared in constant time),
joining, leaving, coming back, and a person's presence at a table."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import replace

from common.level_names import LEVEL_NAMES
from engines.cache import remember
from service import decode_cache
from service.identity import Player
from service.model import (
    MAX_SEAT_TOKENS,
    PRIVATE_OPTION,
    EventKind,
    Seat,
    SeatKind,
    Status,
    TableRecord,
)
from service.reasons import Reason
from service.table_base import TableBase
from service.table_errors import Code, TableError, closed_as_abandoned
from service.validation import CLIENT_TOKEN, MAX_NAME_CHARS, outside_entrant

# tables remembered per process as recently seen (beyond: forgotten, and written again)
MAX_SEEN_REMEMBERED = 100_000


# what a call presents for a seat: a seat token, a verified player, or nothing (a spectator)
Credential = str | Player | None


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def holds(seat: Seat, credential: Credential, digest: str = "") -> bool:
    """Whether `credential` plays `seat`: its player, or one of its tokens (`digest`: the
    token's hash, when the caller has it already). Not constant-time: for a seat already
    found (streams following their own seat)."""
    if not seat.occupied or credential is None:
        return False
    if isinstance(credential, Player):
        return seat.player == credential.player_id
    digest = digest or hash_token(credential)
    return digest == seat.token_hash or digest in seat.tokens


def with_token(seat: Seat, digest: str) -> Seat:
    """The seat with one more token (a device of its player), the oldest extra dropped."""
    extra = (*seat.tokens, digest)[-(MAX_SEAT_TOKENS - 1) :]
    return replace(seat, tokens=extra, timeouts=0, away=False)


def reserved_for(index: int, seat: Seat) -> str:
    """Why a bot may not take `seat`: whose it is (Seat.bot_level holds a bot seat's entrant,
    a level's or an outside one's)."""
    entrant = seat.bot_level
    level = " (a built-in level, served by the bot workers)" if entrant in LEVEL_NAMES else ""
    return f"seat {index} is reserved for entrant {entrant}{level}"


class TableSeats(TableBase):
    """Seats and tokens, on the shared core."""

    @staticmethod
    def authenticate(record: TableRecord, token: Credential) -> int | None:
        """The seat holding `token` (a seat token, or a player's seat); None without one (a
        spectator), and for a player without a seat at a public table."""
        if isinstance(token, Player):
            return TableSeats._players_seat(record, token)
        if not token:
            if record.options.get(PRIVATE_OPTION):
                raise TableError(
                    Code.PERMISSION_DENIED,
                    f"table {record.table_id} is private: spectators are not admitted; "
                    "send the seat token of a seat you hold",
                    reason=Reason.PRIVATE_TABLE,
                )
            return None
        # every seat is compared, so the time taken says nothing about which matched
        found = TableSeats._held_by(record, token)
        if found is None:
            raise TableError(
                Code.PERMISSION_DENIED,
                f"the token holds no seat at table {record.table_id} (wrong table, or the seat "
                "was given up)",
                reason=Reason.BAD_TOKEN,
            )
        return found
    @staticmethod
    def _players_seat(record: TableRecord, player: Player) -> int | None:
        for i, seat in enumerate(record.seats):
            if seat.occupied and seat.player == player.player_id:
                return i
        if record.options.get(PRIVATE_OPTION):
            raise TableError(
                Code.PERMISSION_DENIED,
                f"table {record.table_id} is private and you hold no seat at it: spectators "
                "are not admitted",
                reason=Reason.PRIVATE_TABLE,
            )
        return None
    @staticmethod
    def _held_by(record: TableRecord, token: str) -> int | None:
        """The occupied seat one of whose tokens is `token`, comparing every token of every
        seat in constant time."""
        digest = hash_token(token)
        found = None
        for i, seat in enumerate(record.seats):
            for known in (seat.token_hash, *seat.tokens):
                if seat.occupied and hmac.compare_digest(digest, known):
                    found = i
        return found
    @staticmethod
    def _odd_characters(token: str) -> str:
        """Says whether a refused token holds characters outside the alphabet, without
        quoting any of them."""
        odd = sum(1 for ch in token if not (ch.isascii() and (ch.isalnum() or ch in "-_")))
        return f", {odd} of them outside that alphabet" if odd else ""
    @staticmethod
    def require_seat(record: TableRecord, token: Credential) -> int:
        if isinstance(token, Player):
            seat = TableSeats._players_seat(record, token)
            if seat is None:
                raise TableError(
                    Code.PERMISSION_DENIED,
                    f"you hold no seat at table {record.table_id} (join it first, or the seat "
                    "was given up)",
                    reason=Reason.NOT_SEATED,
                )
            return seat
        if not token:
            raise TableError(
                Code.UNAUTHENTICATED,
                "a seat token is required: send 'authorization: Bearer <token>' metadata "
                "(JoinTable returns the token)",
                reason=Reason.TOKEN_REQUIRED,
            )
        seat = TableSeats.authenticate(record, token)
        assert seat is not None
        return seat
    async def present(self, record: TableRecord, seat: int | None) -> None:
        """A seated person called (or keeps a stream open): the table's last-seen time is
        raised, at most every `presence_every` seconds per table and process, and with no new
        version (nobody's view goes stale). Bots are not people: their calls do not count.
        The seat's own presence (service.presence) is written likewise, once a heartbeat."""
        if seat is None or record.seats[seat].is_bot or record.status.closed:
            return
        await self.presence.seen(record.table_id, seat, record.seats[seat].joined_at)
        now = self.clock()
        every = self.abandon.presence_every
        if record.seen_at + every > now:
            return
        last = self._seen.get(record.table_id)
        if last is not None and last + every > now:
            return
        remember(self._seen, MAX_SEEN_REMEMBERED, record.table_id, now)
        await self.store.touch(record.table_id, now)
    def _bot_may_take(
        self, record: TableRecord, seat: Seat, now: float, entrant: str = ""
    ) -> bool:
        """Whether a bot joining as `entrant` ("" : a worker of the built-in levels) may take
        `seat`: a free bot seat reserved for it, or (workers only) a free person's seat past
        the fill delay."""
        if seat.occupied or seat.player:
            return False
        if seat.kind == SeatKind.BOT:
            return seat.bot_level == entrant if entrant else seat.bot_level in LEVEL_NAMES
        if entrant:
            return False
        due = record.fill_due_at()
        return due is not None and due <= now
    # --- seats --------------------------------------------------------------------------
    async def join(
        self,
        table_id: str,
        seat: int | None,
        name: str,
        bot: bool,
        token: str = "",
        entrant: str = "",
        player: Player | None = None,
    ) -> tuple[int, str, TableRecord]:
        """Takes a free seat. With a client's own `token` the call is idempotent: sent again
        (its reply lost), it returns the seat that token already holds, table unchanged.
        A bot joining as an outside `entrant` takes only seats reserved for it; without one
        (a level's name counts as none) only seats of built-in levels, and person's seats past
        the fill delay. A `player` gets back the seat that is theirs (bound or reserved), with
        a fresh token beside its others, and otherwise takes a free person's seat, which is
        then theirs: never a second seat, never another player's."""
        if player is not None and bot:
            raise TableError(
                Code.INVALID_ARGUMENT,
                "bots join without an identity token: a player's identity is for people",
                reason=Reason.INVALID_ARGUMENT_FIELD, meta={"field": "bot"},
            )
        if entrant and not bot:
            raise TableError(
                Code.INVALID_ARGUMENT, "entrant is for bots: set bot too, or leave entrant empty",
                reason=Reason.INVALID_ARGUMENT_FIELD, meta={"field": "entrant"},
            )
        entrant = outside_entrant(entrant)
        name = name.strip()
        if len(name) > MAX_NAME_CHARS:
            raise TableError(
                Code.RESOURCE_EXHAUSTED, f"names are at most {MAX_NAME_CHARS} characters",
                reason=Reason.TOO_LARGE, meta={"field": "name", "max": MAX_NAME_CHARS},
            )
        if any(not ch.isprintable() for ch in name):
            raise TableError(
                Code.INVALID_ARGUMENT, "names may not contain control characters",
                reason=Reason.INVALID_ARGUMENT_NAME,
            )
        if token and not CLIENT_TOKEN.fullmatch(token):
            # never quote the token: it is a secret, even a malformed one
            raise TableError(
                Code.INVALID_ARGUMENT,
                f"a token of your own must be 22 to 128 characters of A-Z, a-z, 0-9, '-' and "
                f"'_' (this one has {len(token)} characters{self._odd_characters(token)})",
                reason=Reason.INVALID_ARGUMENT_TOKEN,
            )
        async with self.lock(table_id):
            record = await self.get(table_id)
            held = self._held_by(record, token) if token else None
            if held is not None:
                mine = record.seats[held]
                if mine.kind == SeatKind.BOT and bot and (
                    mine.bot_level != entrant if entrant else mine.bot_level not in LEVEL_NAMES
                ):
                    raise TableError(
                        Code.FAILED_PRECONDITION, reserved_for(held, mine),
                        reason=Reason.SEAT_RESERVED, meta={"seat": held},
                    )
                if (seat is not None and seat != held) or record.seats[held].is_bot != bot:
                    raise TableError(
                        Code.FAILED_PRECONDITION,
                        f"this token already holds seat {held} at table {table_id} (as "
                        f"{'a bot' if record.seats[held].is_bot else 'a person'}); join with "
                        "another token for another seat",
                        reason=Reason.ALREADY_SEATED, meta={"seat": held},
                    )
                await self.present(record, held)
                return held, token, record
            if record.status == Status.ABANDONED:
                raise closed_as_abandoned(table_id, "nothing to join")
            if record.status == Status.FINISHED:
                raise TableError(
                    Code.FAILED_PRECONDITION, f"table {table_id} is finished; nothing to join",
                    reason=Reason.TABLE_FINISHED,
                )
            now = self.clock()
            if player is not None:
                theirs = [i for i, s in enumerate(record.seats) if s.player == player.player_id]
                if theirs and seat is not None and seat != theirs[0]:
                    raise TableError(
                        Code.FAILED_PRECONDITION,
                        f"seat {theirs[0]} of table {table_id} is yours: a player holds one seat "
                        "at a table",
                        reason=Reason.ALREADY_SEATED, meta={"seat": theirs[0]},
                    )
                if theirs and record.seats[theirs[0]].occupied:
                    return await self._rejoin(record, theirs[0], token, now)
                if theirs:
                    seat = theirs[0]
            who = (f"entrant {entrant}" if entrant else "a bot") if bot else "a person"
            if seat is None:
                free = [
                    i for i, s in enumerate(record.seats) if not s.occupied and not s.player
                ]
                if bot:
                    # reserved bot seats first, then human seats past their fill delay
                    ranked = [
                        i
                        for kind in (SeatKind.BOT, SeatKind.HUMAN)
                        for i in free
                        if record.seats[i].kind == kind
                        and self._bot_may_take(record, record.seats[i], now, entrant)
                    ]
                else:
                    ranked = [i for i in free if record.seats[i].kind == SeatKind.HUMAN]
                if not ranked:
                    raise TableError(
                        Code.FAILED_PRECONDITION,
                        f"table {table_id} has no free seat for {who}",
                        reason=Reason.NO_FREE_SEAT,
                    )
                seat = ranked[0]
            else:
                if not 0 <= seat < record.players:
                    raise TableError(
                        Code.INVALID_ARGUMENT,
                        f"seat {seat} does not exist: table {table_id} has seats 0 to "
                        f"{record.players - 1}",
                        reason=Reason.INVALID_ARGUMENT_SEAT,
                        meta={"seat": seat, "seats": record.players},
                    )
                target = record.seats[seat]
                if target.player and (player is None or target.player != player.player_id):
                    raise TableError(
                        Code.PERMISSION_DENIED,
                        f"seat {seat} of table {table_id} belongs to another player",
                        reason=Reason.SEAT_BOUND_TO_ANOTHER_PLAYER, meta={"seat": seat},
                    )
                if target.occupied:
                    raise TableError(
                        Code.FAILED_PRECONDITION, f"seat {seat} is taken",
                        reason=Reason.SEAT_TAKEN, meta={"seat": seat},
                    )
                if bot and target.kind == SeatKind.BOT and not self._bot_may_take(
                    record, target, now, entrant
                ):
                    raise TableError(
                        Code.FAILED_PRECONDITION, reserved_for(seat, target),
                        reason=Reason.SEAT_RESERVED, meta={"seat": seat},
                    )
                if bot and entrant and target.kind == SeatKind.HUMAN:
                    raise TableError(
                        Code.FAILED_PRECONDITION,
                        f"seat {seat} is open to people, not reserved for entrant {entrant}",
                        reason=Reason.SEAT_RESERVED, meta={"seat": seat},
                    )
                if bot and not self._bot_may_take(record, target, now, entrant):
                    due = record.fill_due_at()
                    why = (
                        "this table does not fill seats with bots"
                        if due is None
                        else f"bots may take it in {due - now:.0f} s, when the fill delay ends"
                    )
                    raise TableError(
                        Code.FAILED_PRECONDITION, f"seat {seat} is open to people; {why}",
                        reason=Reason.SEAT_RESERVED, meta={"seat": seat},
                    )
                if not bot and target.kind == SeatKind.BOT:
                    raise TableError(
                        Code.FAILED_PRECONDITION,
                        f"seat {seat} is reserved for a bot (entrant {target.bot_level})",
                        reason=Reason.SEAT_RESERVED, meta={"seat": seat},
                    )
            token = token or secrets.token_urlsafe(24)
            old = record.seats[seat]
            default_name = player.name if player else f"bot {seat}" if bot else f"player {seat}"
            taken = Seat(
                kind=old.kind,
                bot_level=old.bot_level,
                occupied=True,
                name=name or default_name,
                is_bot=bot,
                token_hash=hash_token(token),
                joined_at=now,
                player=player.player_id if player else "",
                reserved=old.reserved,
            )
            seats = record.seats[:seat] + (taken,) + record.seats[seat + 1 :]
            game = self.game(record.game)
            state = decode_cache.decode(game, record.state) if record.dealt else None
            status = self._status(seats, game, state)
            new = record.with_(seats=seats, status=status, version=record.version + 1)
            if status == Status.PLAYING and not record.dealt:
                # the last seat is taken: only now are the cards dealt (this event is the
                # first to carry them, and the record's initial state)
                new = self._deal(game, new, new.version)
            if not bot:
                new = new.with_(seen_at=max(now, record.seen_at))
            event = self._event(new, EventKind.JOINED, seat, taken.name, now)
            await self._commit(record, new, [event])
            return seat, token, new
    async def _rejoin(
        self, record: TableRecord, seat: int, token: str, now: float
    ) -> tuple[int, str, TableRecord]:
        """A player back at their seat from another device: a fresh token beside the others
        (which stay valid), the seat no longer away; a JOINED event says they are back."""
        token = token or secrets.token_urlsafe(24)
        mine = with_token(record.seats[seat], hash_token(token))
        seats = record.seats[:seat] + (mine,) + record.seats[seat + 1 :]
        new = record.with_(seats=seats, version=record.version + 1, seen_at=max(now, record.seen_at))
        await self._commit(record, new, [self._event(new, EventKind.JOINED, seat, mine.name, now)])
        return seat, token, new
    async def leave(self, table_id: str, token: Credential) -> TableRecord:
        async with self.lock(table_id):
            record = await self.get(table_id)
            seat = self.require_seat(record, token)
            if record.status == Status.ABANDONED:
                raise closed_as_abandoned(table_id, "there is nothing to leave")
            if record.status == Status.FINISHED:
                raise TableError(
                    Code.FAILED_PRECONDITION,
                    f"table {table_id} is finished; there is nothing to leave",
                    reason=Reason.TABLE_FINISHED,
                )
            old = record.seats[seat]
            # a seat reserved for a player at the table's creation stays theirs
            kept = old.player if old.reserved else ""
            seats = (
                record.seats[:seat]
                + (Seat(kind=old.kind, bot_level=old.bot_level, player=kept, reserved=old.reserved),)
                + record.seats[seat + 1 :]
            )
            now = self.clock()
            # in a pause between deals, whoever takes the seat next has not said ready yet
            ready = tuple(s for s in record.ready if s != seat)
            new = record.with_(seats=seats, status=Status.WAITING, version=record.version + 1,
                               ready=ready)
            await self._commit(record, new, [self._event(new, EventKind.LEFT, seat, old.name, now)])
            return new
    async def come_back(self, record: TableRecord, seat: int) -> TableRecord:
        """Hands an away seat back to its person (who just called with its token): the
        server stops playing for it; a JOINED event tells the table."""
        async with self.lock(record.table_id):
            fresh = await self.get(record.table_id)
            mover = fresh.seats[seat]
            if (
                not mover.away
                or mover.token_hash != record.seats[seat].token_hash
                or fresh.status.closed  # nothing follows the END event
            ):
                return fresh
            seats = fresh.seats[:seat] + (mover.back(),) + fresh.seats[seat + 1 :]
            new = fresh.with_(seats=seats, version=fresh.version + 1)
            event = self._event(new, EventKind.JOINED, seat, mover.name, self.clock())
            await self._commit(fresh, new, [event])
            return new
