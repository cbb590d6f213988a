"""Redis Cluster clients for the store: the `redis+cluster://` URL form.

`redis+cluster://[user:password@]host:port,host:port/?prefix=...&buckets=16`
(`rediss+cluster://` for TLS) names some nodes of one cluster: any one that answers is enough,
the client learns the others from it and follows failovers and resharding (MOVED). A cluster
has no databases (no `/db` path) and no unix sockets.

Kept apart from the plain client so that whatever builds the store's clients (a plain Redis,
a cluster, another topology) asks one function per form.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.exceptions import ClusterError, RedisClusterException, TryAgainError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

CLUSTER_SCHEMES = ("redis+cluster", "rediss+cluster")
# tables are spread over this many hash slots when the URL does not say (`buckets=`)
DEFAULT_CLUSTER_BUCKETS = 16
# connections per node: the async cluster client refuses a command past them instead of
# waiting, so room for every call a replica may have in flight
CLUSTER_CONNECTIONS = 1000
# query settings passed on to the client, as numbers of seconds
_TIMEOUTS = ("socket_timeout", "socket_connect_timeout")
# what a store call meets while Redis cannot answer: a node gone or unreachable, and on a
# cluster also a failover under way (CLUSTERDOWN, TRYAGAIN, a slot no primary serves yet)
OUTAGES: tuple[type[Exception], ...] = (
    RedisConnectionError, RedisTimeoutError, ClusterError, TryAgainError, RedisClusterException,
)


def is_cluster(url: str) -> bool:
    return url.split("://", 1)[0] in CLUSTER_SCHEMES


def cluster_nodes(url: str) -> list[tuple[str, int]]:
    """(host, port) of the nodes a cluster URL names."""
    netloc = urlsplit(url).netloc.rpartition("@")[2]
    nodes = []
    for part in netloc.split(","):
        host, _, port = part.strip().rpartition(":")
        if not host:  # no port given
            host, port = port, "6379"
        if not host or not port.isdigit():
            raise ValueError(f"a cluster node must be host:port, got {part!r}")
        nodes.append((host.strip("[]"), int(port)))
    return nodes


def node_options(url: str) -> dict[str, Any]:
    """Connection settings of a cluster URL that any one node's connection takes too
    (credentials, TLS, timeouts)."""
    parts = urlsplit(url)
    if parts.path.strip("/"):
        raise ValueError("a Redis Cluster has no databases: leave the URL's path empty")
    options: dict[str, Any] = {}
    userinfo = parts.netloc.rpartition("@")[0]
    if userinfo:
        user, _, password = userinfo.partition(":")
        if user:
            options["username"] = unquote(user)
        if password:
            options["password"] = unquote(password)
    if parts.scheme.startswith("rediss"):
        options["ssl"] = True
    for name, values in parse_qs(parts.query).items():
        if name not in _TIMEOUTS:
            raise ValueError(f"unknown setting {name!r} in a cluster URL")
        options[name] = float(values[-1])
    return options


def cluster_client(url: str, **options: Any) -> RedisCluster:
    """A cluster client from a cluster URL (prefix, retention and buckets taken out)."""
    return RedisCluster(
        startup_nodes=[ClusterNode(host, port) for host, port in cluster_nodes(url)],
        max_connections=CLUSTER_CONNECTIONS,
        **node_options(url),
        **options,
    )


def limits_url(url: str) -> str:
    """The URL the `limits` library reads for the same cluster (no TLS form there)."""
    scheme, rest = url.split("://", 1)
    if scheme != "redis+cluster":
        raise ValueError("the rate limits speak to a cluster over plain TCP only")
    return f"async+redis+cluster://{rest.split('?', 1)[0].rstrip('/')}"
