"""What every store's index from players to their tables is made of, in one place so that the
three backends agree: which players a record names, when a table closed, and which indexed
tables a listing keeps (`Store.player_tables`).

The indexes are supersets on purpose: an entry is added whenever a record naming a player is
written and never taken out when a player leaves a seat (that would cost a delete on every
seat change); a listing checks each record it reads against `belongs`.
"""

from __future__ import annotations

from collections.abc import Sequence

from service.model import Event, EventKind, TableRecord


def players_of(record: TableRecord) -> tuple[str, ...]:
    """The players the record's seats name (bound or reserved), each once, in seat order."""
    return tuple(dict.fromkeys(s.player for s in record.seats if s.player))


def closed_at(record: TableRecord, events: Sequence[Event]) -> float | None:
    """When the table closed, for a write that closes it (its END event's time); else None."""
    if not record.status.closed:
        return None
    for e in reversed(events):
        if e.kind == EventKind.END:
            return e.time
    return events[-1].time if events else record.created_at


def seat_of(record: TableRecord, player_id: str) -> int | None:
    """The first seat of `player_id` at the table, or None."""
    for i, s in enumerate(record.seats):
        if s.player == player_id:
            return i
    return None


def order_key(record: TableRecord) -> tuple[float, str]:
    """The listing's order (newest first: descending) and its page cursor."""
    return (record.created_at, record.table_id)


def belongs(
    record: TableRecord,
    player_id: str,
    after: tuple[float, str] | None,
    game: str,
    closed: float | None,
    closed_since: float | None,
) -> bool:
    """Whether an indexed table stays in a listing: still one of the player's, past the page
    cursor, of the game asked for, and open or closed at or after `closed_since` (`closed`:
    when it closed, as the index recorded it)."""
    if seat_of(record, player_id) is None:
        return False
    if after is not None and order_key(record) >= after:
        return False
    if game and record.game != game:
        return False
    if record.status.closed:
        return closed_since is not None and closed is not None and closed >= closed_since
    return True
