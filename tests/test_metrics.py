"""Prometheus metrics over HTTP: a real server and a two-process bot worker play a table,
then both /metrics endpoints are scraped and read like Prometheus would."""

from __future__ import annotations

import threading
import time
import urllib.request
from pathlib import Path

import pytest
from croupier.v1 import croupier_pb2 as pb
from prometheus_client.parser import text_string_to_metric_families

from tests.bot_support import CROUPIER, Proc, bot_seats, create_table, events_to_end, stub_for
from tests.support import ServerProcess, free_port

pytestmark = pytest.mark.e2e


def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of /metrics: (name, sorted labels) -> value."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
        text = reply.read().decode()
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def value(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_server_and_bot_metrics_after_a_played_table(tmp_path: Path) -> None:
    server_port, bots_port = free_port(), free_port()
    server = ServerProcess(
        db=tmp_path / "c.db", extra=("--fill-interval", "0.1", "--metrics-port", str(server_port))
    ).start()
    bots = Proc(
        "bots",
        [CROUPIER, "bots", "--server", server.address, "--workers", "2", "--poll", "0.1",
         "--metrics-port", str(bots_port)],
        tmp_path / "bots.log",
    )
    channel, stub = stub_for(server.address)
    try:
        table_id = create_table(stub, bot_seats(3))
        events = events_to_end(stub, table_id)
        assert events[-1].kind == pb.EVENT_KIND_END
        moves = sum(1 for e in events if e.kind == pb.EVENT_KIND_MOVE)

        # a stream open right now shows in the subscribers gauge
        waiting = create_table(stub, [pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN)] * 3)
        call = stub.StreamTable(pb.StreamTableRequest(table_id=waiting), timeout=30)
        first = threading.Event()

        def read_first() -> None:
            next(call)
            first.set()

        reader = threading.Thread(target=read_first, daemon=True)
        reader.start()
        assert first.wait(10)
        s = scrape(server_port)
        assert value(s, "croupier_stream_subscribers") >= 1
        call.cancel()

        assert value(s, "croupier_rpcs_total", method="SubmitMove", code="OK") >= moves
        assert value(s, "croupier_moves_total", game="dou_dizhu") >= moves
        assert value(s, "croupier_rpc_duration_seconds_count", method="JoinTable", code="OK") >= 3
        assert value(s, "croupier_rpc_duration_seconds_bucket", method="SubmitMove", code="OK",
                     le="+Inf") >= moves
        # the tables gauge is refreshed every few seconds
        deadline = time.monotonic() + 12
        while value(s, "croupier_tables", game="dou_dizhu", status="finished") < 1:
            assert time.monotonic() < deadline, "tables gauge never counted the finished table"
            time.sleep(0.5)
            s = scrape(server_port)
        assert value(s, "croupier_tables", game="dou_dizhu", status="waiting") >= 1

        b = scrape(bots_port)  # summed over the two worker processes
        decided = value(b, "croupier_bot_decision_seconds_count", level="random", game="dou_dizhu")
        assert decided >= moves  # one per accepted move, more if one was refused
    finally:
        channel.close()
        assert bots.stop() == 0, bots.describe()
        server.stop()
