"""Per-process limits that keep one client from starving the others.

Each refusal is a TableError with RESOURCE_EXHAUSTED and a message naming the limit, so a
client can tell a limit from a rule. Counts live in this server process: behind a load
balancer with N replicas a client may get up to N times a limit, which still bounds it.

- message size: enforced by gRPC itself (the server's max receive length);
- tables per client: unfinished tables created by one client (its API key, else its address);
- streams per table: open StreamTable calls of one table;
- moves per second per seat: SubmitMove calls per seat token, a moving window (`limits`).
"""

from __future__ import annotations

import contextlib
import hashlib
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass

from limits import RateLimitItem, parse
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter

from service.store import Status, TableRecord
from service.tables import Code, TableError

DEFAULT_MAX_MESSAGE_BYTES = 1 << 20
DEFAULT_STREAMS_PER_TABLE = 64


@dataclass(frozen=True)
class Limits:
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    tables_per_client: int = 0  # unfinished tables one client may have created; 0: no limit
    streams_per_table: int = DEFAULT_STREAMS_PER_TABLE  # 0: no limit
    move_rate: str = ""  # SubmitMove calls per seat, e.g. "10/second" or "20 per 2 seconds"

    def __post_init__(self) -> None:
        if self.max_message_bytes < 1024:
            raise ValueError("the message size limit must be at least 1024 bytes")
        if self.tables_per_client < 0 or self.streams_per_table < 0:
            raise ValueError("table and stream limits may not be negative (0: no limit)")
        if self.move_rate:
            rate_item(self.move_rate)


def rate_item(text: str) -> RateLimitItem:
    """'10/second' -> the `limits` item; ValueError saying what is expected."""
    try:
        return parse(text)
    except ValueError:
        raise ValueError(
            f"move rate {text!r} is not a rate; write e.g. '10/second' or '100 per minute'"
        ) from None


def client_key(peer: str, api_key: str | None = None) -> str:
    """Who a request comes from: the API key's digest if it has one, else its address
    without the port (gRPC peers read 'ipv4:1.2.3.4:5678')."""
    if api_key:
        return "key:" + hashlib.sha256(api_key.encode()).hexdigest()[:16]
    host = peer.rsplit(":", 1)[0] if peer.count(":") >= 2 else peer
    return "peer:" + host


class Guard:
    """The counters behind Limits, for one server process."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._streams: dict[str, int] = defaultdict(int)
        self._created: dict[str, list[str]] = defaultdict(list)
        self._rate = rate_item(limits.move_rate) if limits.move_rate else None
        self._limiter = MovingWindowRateLimiter(MemoryStorage()) if self._rate else None

    # --- moves ----------------------------------------------------------------------------
    def check_move(self, table_id: str, token: str | None) -> None:
        """Counts one SubmitMove for the seat holding `token` (unknown tokens count too, so
        guessing is throttled the same way); refuses when the seat's window is full."""
        if self._limiter is None or self._rate is None or not token:
            return
        seat_key = hashlib.sha256(token.encode()).hexdigest()[:24]
        if not self._limiter.hit(self._rate, table_id, seat_key):
            raise TableError(
                Code.RESOURCE_EXHAUSTED,
                f"too many moves from this seat: at most {self._rate} per seat; wait and "
                "resend (the table is unchanged)",
            )

    # --- streams --------------------------------------------------------------------------
    @contextlib.contextmanager
    def stream(self, table_id: str) -> Iterator[None]:
        """Holds one of the table's stream places while the stream runs."""
        limit = self.limits.streams_per_table
        if limit and self._streams[table_id] >= limit:
            raise TableError(
                Code.RESOURCE_EXHAUSTED,
                f"table {table_id} already has {limit} open streams (the limit per table); "
                "close one or retry later",
            )
        self._streams[table_id] += 1
        try:
            yield
        finally:
            self._streams[table_id] -= 1
            if not self._streams[table_id]:
                del self._streams[table_id]

    def open_streams(self, table_id: str) -> int:
        return self._streams.get(table_id, 0)

    # --- tables ---------------------------------------------------------------------------
    async def check_create(
        self, client: str, get: Callable[[str], Awaitable[TableRecord | None]]
    ) -> None:
        """Refuses a client at its limit of unfinished tables; finished or vanished tables
        are forgotten first (looked up only when the limit is reached)."""
        limit = self.limits.tables_per_client
        if not limit or len(self._created.get(client, ())) < limit:
            return
        alive = []
        for table_id in self._created[client]:
            record = await get(table_id)
            if record is not None and record.status != Status.FINISHED:
                alive.append(table_id)
        self._created[client] = alive
        if len(alive) >= limit:
            raise TableError(
                Code.RESOURCE_EXHAUSTED,
                f"this client already has {len(alive)} unfinished tables (the limit is "
                f"{limit}); finish or abandon one first",
            )

    def created(self, client: str, table_id: str) -> None:
        if self.limits.tables_per_client:
            self._created[client].append(table_id)
