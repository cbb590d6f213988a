"""Presence test helpers: a server with short presence settings, and a stream read on a thread
of its own so that a test can wait for an event with a timeout."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path

import grpc
from croupier.v1 import croupier_pb2 as pb

from tests.support import EventStream, ServerProcess

# a stream writes its seat's presence every 0.3 s: connected within 0.6 s, gone after 2.5 s
PRESENCE_FLAGS = ("--fill-interval", "0.1", "--poll-seconds", "0.2",
                  "--presence-seconds", "0.3", "--gone-after", "2.5")


def presence_server(db: Path, store: str = "") -> ServerProcess:
    return ServerProcess(db=db, store=store, extra=PRESENCE_FLAGS).start()


def presences(table: pb.Table) -> list[int]:
    return [s.presence for s in table.seats]


class Watcher:
    """Every event of one stream, in a queue filled by a thread of its own."""

    def __init__(self, stream: EventStream) -> None:
        self.stream = stream
        self.events: queue.Queue[pb.TableEvent] = queue.Queue()
        self.seen: list[pb.TableEvent] = []
        self.error: grpc.RpcError | None = None
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            for event in self.stream:
                self.events.put(event)
        except grpc.RpcError as e:
            self.error = e

    def wait_for(self, want: Callable[[pb.TableEvent], bool], timeout: float = 10.0
                 ) -> pb.TableEvent:
        """The first event from now on that `want` accepts (AssertionError after timeout)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no such event in {timeout} s; got {len(self.seen)} events")
            try:
                event = self.events.get(timeout=left)
            except queue.Empty:
                continue
            self.seen.append(event)
            if want(event):
                return event

    def close(self) -> None:
        self.stream.cancel()
        self._thread.join(5)
