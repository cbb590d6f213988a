"""What browsers pay: the same calls over the web port (Connect, gRPC-Web) beside native gRPC.

`python -m bench.web_latency` starts one `croupier serve` with `--web-listen` (SQLite in a temp
dir; a separate process), seats a Dou Dizhu table, then measures one call at a time, for
`--seconds` each: Ping (the floor) and GetView with a seat token (a real read: table lookup,
authentication, the view rendered), over native gRPC (grpcio), Connect binary, Connect JSON and
gRPC-Web (connectrpc's client, HTTP/1.1). Each round measures every transport back to back;
"vs gRPC" is the median over rounds of each round's ratio to the native gRPC call measured in
the same round, so that load from elsewhere hits both sides alike. The client side differs too
(grpcio's C core against a Python HTTP client), so the ratio is an upper bound on the server's
extra cost per call.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import grpc
from connectrpc.client import ConnectClientSync
from connectrpc.compat import google_protobuf_binary_codec, google_protobuf_json_codec
from connectrpc.protocol import ProtocolType
from croupier.v1 import croupier_pb2 as pb
from croupier.v1 import croupier_pb2_grpc as pb_grpc

from service.web import method_info
from tests.support import free_port, wait_serving

TRANSPORTS = ("gRPC", "Connect", "Connect JSON", "gRPC-Web")


def timed(call: Callable[[], object], seconds: float) -> list[float]:
    """Latencies (ms) of back-to-back calls for `seconds` of wall clock."""
    out: list[float] = []
    until = time.perf_counter() + seconds
    while (start := time.perf_counter()) < until:
        call()
        out.append((time.perf_counter() - start) * 1000)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="per call and transport")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)

    tmp = Path(tempfile.mkdtemp(prefix="croupier-web-bench-"))
    port, web_port = free_port(), free_port()
    log = (tmp / "server.log").open("wb")
    server = subprocess.Popen(
        [sys.executable, "-m", "service.cli", "serve", "--listen", f"127.0.0.1:{port}",
         "--store", f"sqlite:{tmp / 'c.db'}", "--web-listen", f"127.0.0.1:{web_port}",
         "--log-level", "warning", "--deal-pause-seconds", "0"],
        stdout=log, stderr=log,
    )  # fmt: skip
    try:
        wait_serving(f"127.0.0.1:{port}", proc=server)
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        stub = pb_grpc.CroupierStub(channel)
        table = stub.CreateTable(pb.CreateTableRequest(game="dou_dizhu"))
        token = ""
        for i in range(3):
            token = stub.JoinTable(pb.JoinTableRequest(table_id=table.table_id, name=f"b{i}")).token
        md = [("authorization", f"Bearer {token}")]
        ping, view = pb.PingRequest(payload=b"x" * 16), pb.GetViewRequest(table_id=table.table_id)
        url = f"http://127.0.0.1:{web_port}"
        clients = {
            "Connect": ConnectClientSync(url, codec=google_protobuf_binary_codec()),
            "Connect JSON": ConnectClientSync(url, codec=google_protobuf_json_codec()),
            "gRPC-Web": ConnectClientSync(
                url, protocol=ProtocolType.GRPC_WEB, codec=google_protobuf_binary_codec()
            ),
        }

        def calls(transport: str) -> dict[str, Callable[[], object]]:
            if transport == "gRPC":
                return {
                    "Ping": lambda: stub.Ping(ping),
                    "GetView": lambda: stub.GetView(view, metadata=md),
                }
            c = clients[transport]
            headers = {"authorization": f"Bearer {token}"}
            return {
                "Ping": lambda: c.execute_unary(request=ping, method=method_info("Ping")),
                "GetView": lambda: c.execute_unary(
                    request=view, method=method_info("GetView"), headers=headers
                ),
            }

        for t in TRANSPORTS:  # warm up connections and caches
            for call in calls(t).values():
                timed(call, 0.3)
        p50: dict[tuple[str, str], list[float]] = {}
        p99: dict[tuple[str, str], list[float]] = {}
        rate: dict[tuple[str, str], list[float]] = {}
        ratio: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.rounds):
            for rpc in ("Ping", "GetView"):
                base = 0.0
                for t in TRANSPORTS:
                    lat = timed(calls(t)[rpc], args.seconds)
                    med = statistics.median(lat)
                    base = base or med
                    p50.setdefault((rpc, t), []).append(med)
                    p99.setdefault((rpc, t), []).append(statistics.quantiles(lat, n=100)[98])
                    rate.setdefault((rpc, t), []).append(len(lat) / args.seconds)
                    ratio.setdefault((rpc, t), []).append(med / base)
        print("| RPC | transport | p50 ms | p99 ms | calls/s | p50 vs gRPC |")
        print("|---|---|---:|---:|---:|---:|")
        for rpc in ("Ping", "GetView"):
            for t in TRANSPORTS:
                k = (rpc, t)
                print(
                    f"| {rpc} | {t} | {statistics.median(p50[k]):.3f} | "
                    f"{statistics.median(p99[k]):.3f} | {statistics.median(rate[k]):,.0f} | "
                    f"{statistics.median(ratio[k]):.2f}x |"
                )
        channel.close()
    finally:
        server.terminate()
        server.wait(15)
        log.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
