"""How the runner talks to a server that may go away: status codes, retries, the channel."""

from __future__ import annotations

import asyncio
import contextlib
import random
from dataclasses import dataclass, field

import grpc

from common.channel import open_channel

DEFAULT_SERVER = "127.0.0.1:50051"
RPC_TIMEOUT = 15.0
LEAVE_SECONDS = 8.0  # how long a seat being given back tries while the server is away

# Codes that mean "the server is (momentarily) not there": retry with backoff.
TRANSIENT = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.CANCELLED,
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    }
)
# Codes after which a move is sent again as it was (the server recognises a repeat; a move
# rate limit says "wait and resend").
RESUBMIT = frozenset(
    {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED,
     grpc.StatusCode.RESOURCE_EXHAUSTED}
)
# Codes of a move the server will not take (not legal, not a move at all).
REFUSED = frozenset({grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.INVALID_ARGUMENT})
# Codes that mean the seat is no longer ours to play (table gone, token refused).
SEAT_LOST = frozenset(
    {
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.PERMISSION_DENIED,
    }
)
# Reconnect quickly after a server restart instead of grpc's default backoff (up to 2 min).
# round_robin: with a target naming several servers (dns:///croupier-headless:50051 in
# Kubernetes) calls spread over all of them, and a stream resumes on a live one.
# Keepalive pings: a connection that died silently (a lost node, a balancer's idle timeout)
# fails its streams within about 40 s instead of leaving a seat waiting forever on a stream
# that will never speak (the server accepts pings this often: service.server).
KEEPALIVE_MS = 30_000
CHANNEL_OPTIONS = (
    ("grpc.lb_policy_name", "round_robin"),
    ("grpc.initial_reconnect_backoff_ms", 200),
    ("grpc.min_reconnect_backoff_ms", 200),
    ("grpc.max_reconnect_backoff_ms", 2000),
    ("grpc.keepalive_time_ms", KEEPALIVE_MS),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.http2.max_pings_without_data", 0),  # a stream may stay quiet for hours
)


def channel(server: str, tls_ca: str = "", tls_cert: str = "", tls_key: str = "") -> grpc.aio.Channel:
    """TLS when a CA is given, else plaintext. The API key is not put on the channel: it goes
    on the lobby looks and seat claims only (seat calls carry the seat's token)."""
    return open_channel(server, tls_ca, tls_cert, tls_key, options=CHANNEL_OPTIONS)


@dataclass
class Backoff:
    """Exponential backoff with jitter, so restarted servers are not stampeded."""

    initial: float = 0.2
    maximum: float = 3.0
    current: float = field(default=0.0, init=False)

    def next(self) -> float:
        self.current = self.initial if self.current == 0 else min(self.current * 2, self.maximum)
        return self.current * random.uniform(0.5, 1.0)

    def reset(self) -> None:
        self.current = 0.0


def code(error: grpc.aio.AioRpcError) -> grpc.StatusCode:
    return error.code()


async def sleep_unless(stop: asyncio.Event, seconds: float) -> None:
    """Sleeps `seconds`, or less once `stop` is set."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), seconds)
