"""Table writes acknowledged only once replicas hold them (Redis `WAIT`).

With Sentinel, Redis replicates asynchronously: a move the primary applied and answered can
still be lost if the primary dies before a replica received it, and the replica promoted in
its place never saw it. So, with `wait_replicas=N&wait_timeout_ms=T` in the store URL, every
table write (the store's create and commit scripts: moves, joins, new tables) is followed, on
the same connection, by `WAIT N T`: the write is acknowledged only when N replicas confirmed
they hold it. Sentinel promotes the replica with the most data, so an acknowledged write
survives the loss of the primary. The default is 0 (off): one Redis has no replica to wait
for; with Sentinel, 1 is the setting to use (2 with three data nodes only if losing both
replicas' links should stop writes).

Fewer than N confirmed within T ms (replicas down, lagging, or cut off from a primary that is
about to be replaced): the write is on the primary, yet not acknowledged. The call fails with
WriteUnconfirmed (UNAVAILABLE, saying so) rather than answering OK for a move a failover may
drop, or rolling it back (the primary may already have sent it on). What a client's retry of
the same SubmitMove (same move, same expected_version) then gets:
- the write survived: the table's version moved past the expected one, and the service's
  replay check (`service.moves`) recognises the seat's own move there; before answering it as
  the first, it calls `confirm`, which writes a no-op to the table's record and WAITs again
  (replication is in order, so replicas that hold the no-op hold the move): OK once they do,
  UNAVAILABLE again while they do not. Never applied twice: the compare-and-set refuses a
  second write at the old version.
- it was lost in a failover: the version is still the expected one, and the move is played.
A SubmitMove with expected_version 0 skips the version check: such a retry after an
unconfirmed write may apply a move twice where the rules allow it again, as after any
UNAVAILABLE; clients that retry send the version they decided on.

The script and its WAIT go in one pipeline on one connection (one round trip): WAIT counts the
writes of its own connection, so a WAIT on another pooled connection would confirm nothing. On
a Redis Cluster both go to the primary of the slot of the table's keys (its bucket), in one
pipeline to that node: one connection there, in order; the replicas WAIT counts are that
primary's, those of the table's data. If the
connection breaks, redis-py resends the pipeline whole on a new one: the script runs again
(a no-op conflict if its first run landed, so its WAIT then confirms nothing and the result
is a conflict, which the replay check answers as above).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from redis.asyncio.cluster import RedisCluster
from redis.commands.core import AsyncScript
from redis.exceptions import NoScriptError

from service.redis_connect import Acknowledgement, Client
from service.store import WriteUnconfirmed

# KEYS: the table's record; ARGV: a timestamp. A write that changes nothing that matters (the
# record gains or updates a field no reader looks at), only so that a WAIT after it covers
# every earlier write of the table; nothing at all for a table that is gone.
BARRIER_LUA = """
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HSET', KEYS[1], 'confirmed_at', ARGV[1])
end
return 'ok'
"""


class Acknowledger:
    """Runs the store's write scripts followed by WAIT, when the store URL asks for it."""

    def __init__(self, client: Client, ack: Acknowledgement) -> None:
        self.ack = ack
        self._client = client
        self._barrier = client.register_script(BARRIER_LUA)

    async def write(
        self, script: AsyncScript, keys: Sequence[Any], args: Sequence[Any],
        landed: Callable[[Any], bool], what: str,
    ) -> Any:
        """The script's reply; when `landed(reply)` (it wrote) and replicas are asked for, only
        once they confirmed it, else WriteUnconfirmed naming `what`."""
        if not self.ack.replicas:
            return await script(keys=keys, args=args)
        reply, confirmed = await self._with_wait(script, keys, args)
        if landed(reply):
            self._check(confirmed, what)
        return reply

    async def confirm(self, record_key: str, what: str) -> None:
        """Returns once the replicas asked for hold every write made so far to the table of
        `record_key`; WriteUnconfirmed if they do not in time."""
        if not self.ack.replicas:
            return
        _, confirmed = await self._with_wait(self._barrier, [record_key], [repr(time.time())])
        self._check(confirmed, what)

    async def _with_wait(self, script: AsyncScript, keys: Sequence[Any], args: Sequence[Any]
                         ) -> tuple[Any, int]:
        """The script's reply and how many replicas confirmed it: EVALSHA and WAIT in one
        round trip (redis-py's scripts in a pipeline would ask SCRIPT EXISTS first, another)."""
        for attempt in (1, 2):
            if isinstance(self._client, RedisCluster):
                await self._client.initialize()  # at once when it already is
                # WAIT has no key: sent to the node of the script's slot by name
                node = self._client.get_node_from_key(keys[0])
                async with self._client.pipeline(transaction=False) as cpipe:
                    cpipe.evalsha(script.sha, len(keys), *keys, *args)
                    cpipe.execute_command("WAIT", self.ack.replicas, self.ack.timeout_ms,
                                          target_nodes=node)
                    reply, confirmed = await cpipe.execute(raise_on_error=False)
                now = self._client.get_node_from_key(keys[0])
                if node is None or now is None or now.name != node.name:
                    # the slot moved meanwhile (MOVED/ASK: the script was sent on to its new
                    # node), so the WAIT counted another node's writes: not a confirmation
                    confirmed = 0
            else:
                async with self._client.pipeline(transaction=False) as pipe:
                    pipe.evalsha(script.sha, len(keys), *keys, *args)
                    pipe.wait(self.ack.replicas, self.ack.timeout_ms)
                    reply, confirmed = await pipe.execute(raise_on_error=False)
            if isinstance(reply, NoScriptError) and attempt == 1:
                # a Redis that has not seen the script yet (a new primary after a failover, a
                # restart): it did not run; load it and send both again
                await self._client.script_load(script.script)  # its sha: script.sha
                continue
            for result in (reply, confirmed):
                if isinstance(result, Exception):
                    raise result
            return reply, int(confirmed)
        raise AssertionError("unreachable")

    def _check(self, confirmed: int, what: str) -> None:
        if confirmed < self.ack.replicas:
            raise WriteUnconfirmed(
                f"{what}: written on the Redis primary, but {confirmed} of the "
                f"{self.ack.replicas} replica(s) asked for confirmed it within "
                f"{self.ack.timeout_ms} ms"
            )
