"""Readiness that tells the truth: the server's own service is SERVING on the health service
only while its store answers.

A server whose Redis is down answers every call UNAVAILABLE; were its health still SERVING, a
Kubernetes pod that cannot serve would stay Ready and keep receiving traffic. The overall health
(service "", the liveness probe's) stays SERVING: restarting the pod would not bring Redis back.
"""

from __future__ import annotations

import asyncio

from grpc_health.v1 import health_pb2
from grpc_health.v1._async import HealthServicer

from common.logging import get_logger
from service import server_metrics
from service.store import Store, StoreUnavailable

log = get_logger("croupier.store_health")

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


async def store_answers(store: Store, timeout: float) -> str | None:
    """None when the store answered within `timeout` s, else why not (never a password: the
    store's errors name host and port only)."""
    try:
        await asyncio.wait_for(store.ping(), timeout)
    except StoreUnavailable as exc:
        return str(exc)
    except TimeoutError:
        return f"no answer within {timeout:g} s"
    return None


class StoreWatch:
    """Sets `service`'s health and the croupier_store_up gauge from the store's answers,
    and logs each change once."""

    def __init__(self, store: Store, health: HealthServicer, service: str,
                 interval: float = 2.0, timeout: float = 2.0) -> None:
        self.store, self.health, self.service = store, health, service
        self.interval, self.timeout = interval, timeout
        self.up: bool | None = None  # not checked yet

    async def check(self, at_start: bool = False) -> bool:
        why = await store_answers(self.store, self.timeout)
        up = why is None
        if up != self.up:
            if not up and at_start:
                log.error("store_unreachable_at_start", error=why,
                          consequence="not ready; every call answers UNAVAILABLE until it is back")
            elif not up:
                log.warning("store_unreachable", error=why, consequence="not ready")
            elif self.up is not None:
                log.info("store_reachable_again")
            server_metrics.STORE_UP.set(1 if up else 0)
            # after a graceful shutdown began, the servicer ignores this: NOT_SERVING stays
            await self.health.set(self.service, SERVING if up else NOT_SERVING)
            self.up = up
        return up

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            await self.check()
