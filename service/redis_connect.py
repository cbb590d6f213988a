"""Redis clients from a store URL: one Redis, the primary that Redis Sentinel names, or a
Redis Cluster.

Every part of the server that talks to Redis (the table store and its stream readers, tickets,
the shared limits and rate limits, guest keys through the store) builds its clients here, so
each follows a Sentinel failover or a cluster's MOVED the same way, without a restart.

URL forms (the query also carries the store's own options: `prefix`, `retention`, `buckets`,
`wait_replicas`, `wait_timeout_ms`, see `service.redis_acks`; other query options, e.g.
`socket_timeout`, go to redis-py as connection options):

- `redis://[user:pass@]host:6379/db`, `rediss://...` (TLS), `unix:///path/redis.sock?db=0`:
  one Redis, as redis-py reads these URLs.
- `redis+sentinel://[user:pass@]host:26379,host:26379/SERVICE/db` (`rediss+sentinel://` for
  TLS to the sentinels and the data nodes): the sentinels to ask (port 26379 unless given),
  the name of the monitored primary (SERVICE, required) and the database (0 unless given).
  The user and password are the data nodes'; the sentinels' own come as `sentinel_username=`
  and `sentinel_password=`; `sentinel_timeout=` (seconds, 1 unless given) bounds each question
  to a sentinel, so an unreachable one costs that long before the next is asked.

With Sentinel, redis-py's `Sentinel.master_for` does the following: every new connection asks
the sentinels for the current primary; a connection to a primary that was demoted (READONLY,
or a blocked XREAD unblocked by the demotion) or that went away is dropped and the next
command reconnects to the new one. While no sentinel names a reachable primary, commands fail
with a ConnectionError (the store's StoreUnavailable: UNAVAILABLE to clients), never with a
wrong answer from a replica. Data connections get a connect timeout (2 s unless
`socket_connect_timeout=` says otherwise): a primary whose host vanished (no reset, as when a
node dies) must not hold a call until the client's deadline.

- `redis+cluster://[user:pass@]host:port,host:port/` (`rediss+cluster://` for TLS): some nodes
  of one Redis Cluster (`service.redis_cluster`); tables are spread over `buckets` hash slots
  (16 unless given; on the other forms 1 unless given).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import BlockingConnectionPool
from redis.asyncio.connection import parse_url as redis_parse_url
from redis.asyncio.sentinel import Sentinel, SentinelConnectionPool
from redis.exceptions import MasterDownError, ReadOnlyError, ResponseError

from common.masking import masked
from service.redis_cluster import (
    CLUSTER_SCHEMES,
    DEFAULT_CLUSTER_BUCKETS,
    cluster_client,
    cluster_nodes,
    node_options,
)

# what a call meets while Redis cannot answer, on every URL form (its users import it here)
from service.redis_cluster import OUTAGES as OUTAGES  # noqa: I001

# a client of any URL form: one connection pool's, or a cluster's
Client = aioredis.Redis | RedisCluster

DEFAULT_PREFIX = "croupier:"
PLAIN_SCHEMES = ("redis", "rediss", "unix")
SENTINEL_SCHEMES = ("redis+sentinel", "rediss+sentinel")
SCHEMES = PLAIN_SCHEMES + SENTINEL_SCHEMES + CLUSTER_SCHEMES
MAX_BUCKETS = 1024
SENTINEL_PORT = 26379
SENTINEL_TIMEOUT = 1.0  # s, each question to one sentinel
DATA_CONNECT_TIMEOUT = 2.0  # s, a connection to the primary a sentinel named
DEFAULT_WAIT_TIMEOUT_MS = 1000
# the store's own query options: never passed to redis-py
STORE_OPTIONS = ("prefix", "retention", "buckets", "wait_replicas", "wait_timeout_ms")
SENTINEL_OPTIONS = ("sentinel_password", "sentinel_username", "sentinel_timeout")


def connection_options() -> dict[str, Any]:
    """Options for every Redis connection of the server.

    redis-py 7+ enables "maintenance notifications" by default (`auto`), and with them its pool
    skips the check that a connection it hands out is still open. After Redis restarted, each
    idle pooled connection then failed its first command ("Connection closed by server"), so
    a client got UNAVAILABLE even though Redis was back. Those notifications come from managed
    Redis over RESP3 only; the server speaks RESP2, so switching them off loses nothing and
    brings the check back: a stale connection is reconnected before it is used.
    """
    try:
        from redis.maint_notifications import MaintNotificationsConfig
    except ImportError:  # older redis-py: no such notifications, the check always runs
        return {}
    return {"maint_notifications_config": MaintNotificationsConfig(enabled=False)}


def refused_by_primary(error: BaseException) -> bool:
    """An error reply that means "no primary takes writes here now", not a bug: a node that
    became a replica (READONLY, on a plain URL), a replica cut off from its primary
    (MASTERDOWN), or a primary with too few replicas for `min-replicas-to-write` (NOREPLICAS,
    also from inside a script). Callers answer these UNAVAILABLE, as a lost connection."""
    if isinstance(error, (ReadOnlyError, MasterDownError)):
        return True
    return isinstance(error, ResponseError) and str(error).startswith(
        ("NOREPLICAS", "MASTERDOWN", "READONLY"))


@dataclass(frozen=True)
class Acknowledgement:
    """How many replicas must hold a table write before it is acknowledged (0: none, the
    primary's reply is enough), and how long to wait for them."""

    replicas: int = 0
    timeout_ms: int = DEFAULT_WAIT_TIMEOUT_MS


@dataclass(frozen=True)
class StoreUrl:
    url: str  # the connection URL: the store URL less the store's own options
    prefix: str = DEFAULT_PREFIX
    retention: float = 0.0
    ack: Acknowledgement = field(default_factory=Acknowledgement)
    buckets: int = 1  # hash slots the tables are spread over

    @property
    def sentinel(self) -> bool:
        return _scheme(self.url) in SENTINEL_SCHEMES

    @property
    def cluster(self) -> bool:
        return _scheme(self.url) in CLUSTER_SCHEMES


def _scheme(url: str) -> str:
    return url.split("://", 1)[0].lower()


def is_cluster(url: str) -> bool:
    """Whether a store or connection URL names a Redis Cluster."""
    return _scheme(url) in CLUSTER_SCHEMES


def _number(query: dict[str, list[str]], name: str, default: str, kind: type) -> Any:
    raw = query.pop(name, [default])[-1] or default
    try:
        value = kind(raw)
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        raise ValueError(f"{name} must be {what}, got {raw!r}") from None
    if value < 0:
        raise ValueError(f"{name} may not be negative")
    return value


def parse_store_url(url: str) -> StoreUrl:
    """The store URL read and checked: ValueError saying what is wrong (never quoting a
    password) for an unknown scheme, a Sentinel URL without sentinels or service, a cluster
    URL with a database or an unknown setting, or a bad option."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise ValueError(
            f"unknown Redis URL scheme in {masked(url)!r}; use one of "
            + ", ".join(f"{s}://" for s in SCHEMES)
        )
    query = parse_qs(parts.query, keep_blank_values=True)
    prefix = query.pop("prefix", [DEFAULT_PREFIX])[-1]
    retention = _number(query, "retention", "0", float)
    raw_buckets = query.pop("buckets", [""])[-1]
    if not raw_buckets:
        buckets = DEFAULT_CLUSTER_BUCKETS if scheme in CLUSTER_SCHEMES else 1
    elif not raw_buckets.isdigit() or not 1 <= int(raw_buckets) <= MAX_BUCKETS:
        raise ValueError(
            f"buckets must be a whole number from 1 to {MAX_BUCKETS}, got {raw_buckets!r}")
    else:
        buckets = int(raw_buckets)
    replicas = _number(query, "wait_replicas", "0", int)
    timeout_ms = _number(query, "wait_timeout_ms", str(DEFAULT_WAIT_TIMEOUT_MS), int)
    if replicas and not timeout_ms:
        raise ValueError("wait_timeout_ms must be above 0 (WAIT 0 would wait forever)")
    socket_timeout = query.get("socket_timeout", [""])[-1]
    if replicas and socket_timeout:
        try:
            too_short = float(socket_timeout) * 1000 <= timeout_ms
        except ValueError:
            too_short = False  # redis-py says what is wrong with it
        if too_short:
            raise ValueError(
                f"socket_timeout ({socket_timeout} s) must be longer than wait_timeout_ms "
                f"({timeout_ms} ms), or every write waiting for its replicas times out"
            )
    rest = urlencode({k: v[-1] for k, v in query.items()})
    # written out rather than urlunsplit, which drops the // of a URL without a host
    # (unix:///path -> unix:/path), a form redis-py 8 refuses
    conn = f"{parts.scheme}://{parts.netloc}{parts.path}" + (f"?{rest}" if rest else "")
    parsed = StoreUrl(conn, prefix, retention, Acknowledgement(replicas, timeout_ms), buckets)
    # checked now: a bad URL fails at start, not at the first call
    if parsed.sentinel:
        sentinel_target(conn)
    elif parsed.cluster:
        cluster_nodes(conn)
        node_options(conn)
    return parsed


@dataclass(frozen=True)
class SentinelTarget:
    sentinels: tuple[tuple[str, int], ...]
    service: str
    data: dict[str, Any]  # redis-py connection options of the data nodes
    sentinel: dict[str, Any]  # and of the sentinels


def _hosts(netloc: str, url: str) -> tuple[tuple[str, int], ...]:
    hosts = []
    for item in netloc.split(","):
        item = item.strip()
        if not item:
            continue
        if item.startswith("["):  # [ipv6]:port
            host, _, port = item[1:].partition("]")
            port = port.removeprefix(":")
        else:
            host, _, port = item.rpartition(":") if ":" in item else (item, "", "")
        try:
            number = int(port) if port else SENTINEL_PORT
        except ValueError:
            raise ValueError(f"bad sentinel port {port!r} in {masked(url)!r}") from None
        if not host or not 0 < number < 65536:
            raise ValueError(f"bad sentinel address {item!r} in {masked(url)!r}")
        hosts.append((host, number))
    if not hosts:
        raise ValueError(f"no sentinel host in {masked(url)!r}: host:26379[,host:26379...]")
    return tuple(hosts)


def sentinel_target(url: str) -> SentinelTarget:
    """What a Sentinel connection URL says: the sentinels, the service, the options of the
    data nodes' connections and of the sentinels'."""
    parts = urlsplit(url)
    tls = parts.scheme.lower().startswith("rediss")
    userinfo, _, netloc = parts.netloc.rpartition("@")
    sentinels = _hosts(netloc, url)
    path = [unquote(p) for p in parts.path.split("/") if p]
    if not path or len(path) > 2:
        raise ValueError(
            f"a Sentinel URL names the primary's service, and optionally the database: "
            f"{parts.scheme}://host:26379,host:26379/SERVICE/DB, not {masked(url)!r}"
        )
    service = path[0]
    db = path[1] if len(path) == 2 else "0"
    if not db.isdigit():
        raise ValueError(f"the database must be a number, got {db!r} in {masked(url)!r}")
    query = parse_qs(parts.query, keep_blank_values=True)
    own = {name: query.pop(name)[-1] for name in SENTINEL_OPTIONS if name in query}
    try:
        sentinel_timeout = float(own.get("sentinel_timeout") or SENTINEL_TIMEOUT)
    except ValueError:
        raise ValueError(f"sentinel_timeout must be a number of seconds, got "
                         f"{own['sentinel_timeout']!r}") from None
    # the data nodes' options as redis-py reads them from a URL (types, TLS options, auth)
    rest = urlencode({k: v[-1] for k, v in query.items()})
    auth = f"{userinfo}@" if userinfo else ""
    scheme = "rediss" if tls else "redis"
    data: dict[str, Any] = dict(
        redis_parse_url(f"{scheme}://{auth}placeholder/{db}" + (f"?{rest}" if rest else ""))
    )
    for name in ("host", "port", "connection_class"):  # the sentinels name the host
        data.pop(name, None)
    data.setdefault("socket_connect_timeout", DATA_CONNECT_TIMEOUT)
    sentinel: dict[str, Any] = {
        "socket_timeout": sentinel_timeout,
        "socket_connect_timeout": sentinel_timeout,
        **({"password": own["sentinel_password"]} if own.get("sentinel_password") else {}),
        **({"username": own["sentinel_username"]} if own.get("sentinel_username") else {}),
        **({"ssl": True} if tls else {}),
        **{k: v for k, v in data.items() if k.startswith("ssl_")},
    }
    if tls:
        data["ssl"] = True  # SentinelConnectionPool then makes TLS connections
    return SentinelTarget(sentinels, service, data, sentinel)


class _BlockingSentinelPool(SentinelConnectionPool, BlockingConnectionPool):
    """Sentinel's pool with the blocking pool's wait for a free connection (past its size a
    call waits instead of failing, as on one Redis)."""


class _SentinelClient(aioredis.Redis):
    """A client that also closes the sentinels' connections when its pool closes."""

    sentinels: Sentinel | None = None

    async def aclose(self, close_connection_pool: bool | None = None) -> None:
        closes = close_connection_pool or (
            close_connection_pool is None and self.auto_close_connection_pool
        )
        await super().aclose(close_connection_pool)
        if closes and self.sentinels is not None:
            await self.sentinels.aclose()


def _sentinel_client(url: str, pool_class: type[SentinelConnectionPool],
                     **options: Any) -> _SentinelClient:
    target = sentinel_target(url)
    sentinel = Sentinel(
        target.sentinels,
        sentinel_kwargs={**target.sentinel, **connection_options()},
    )
    client = sentinel.master_for(
        target.service, redis_class=_SentinelClient, connection_pool_class=pool_class,
        **{**target.data, **connection_options(), **options},
    )
    assert isinstance(client, _SentinelClient)
    client.sentinels = sentinel
    return client


def pooled(url: str, max_connections: int | None = None, pool_timeout: float = 10.0,
           **options: Any) -> Client:
    """A client over a pool of connections to the (current) primary, owning its pool (closed
    with `close_client`). With `max_connections`, past that many calls in flight a call waits
    up to `pool_timeout` s for a free connection rather than failing. On a cluster, the
    cluster's client (its own connections per node, `service.redis_cluster`)."""
    conn = parse_store_url(url).url
    if _scheme(conn) in CLUSTER_SCHEMES:
        return cluster_client(conn, **connection_options(), **options)
    if _scheme(conn) in SENTINEL_SCHEMES:
        if max_connections is None:
            return _sentinel_client(conn, SentinelConnectionPool, **options)
        return _sentinel_client(conn, _BlockingSentinelPool, max_connections=max_connections,
                                timeout=pool_timeout, **options)
    if max_connections is None:
        return aioredis.Redis.from_url(conn, **connection_options(), **options)
    pool = BlockingConnectionPool.from_url(
        conn, max_connections=max_connections, timeout=pool_timeout,
        **connection_options(), **options,
    )
    return aioredis.Redis.from_pool(pool)


async def close_client(client: Client) -> None:
    """Closes a client of `pooled` or `dedicated` and its connections."""
    if isinstance(client, RedisCluster):
        await client.aclose()
    else:
        await client.aclose(close_connection_pool=True)


def node_client(url: str, host: str, port: int, **options: Any) -> aioredis.Redis:
    """A client of one connection of its own to one node of the cluster of `url` (a blocked
    XREAD on the node that holds a bucket), with the URL's credentials, TLS and timeouts."""
    conn = parse_store_url(url).url
    return aioredis.Redis(
        host=host, port=port, single_connection_client=True,
        **{**node_options(conn), **connection_options(), **options},
    )


def dedicated(url: str, **options: Any) -> aioredis.Redis:
    """A client of one connection of its own (a blocked XREAD), to the current primary: after
    a failover its next command reconnects to the new one. A cluster has no one primary: use
    `node_client` with the node of the slot."""
    conn = parse_store_url(url).url
    if _scheme(conn) in CLUSTER_SCHEMES:
        raise ValueError("a cluster's connections are to one node each: node_client")
    if _scheme(conn) not in SENTINEL_SCHEMES:
        return aioredis.from_url(
            conn, single_connection_client=True, **connection_options(), **options
        )
    pool_owner = _sentinel_client(conn, SentinelConnectionPool, **options)
    client = _SentinelClient(connection_pool=pool_owner.connection_pool,
                             single_connection_client=True)
    client.auto_close_connection_pool = True
    client.sentinels = pool_owner.sentinels
    return client
