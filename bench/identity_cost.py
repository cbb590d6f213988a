"""What player identities add to JoinTable and SubmitMove, beside today's seat tokens.

`python -m bench.identity_cost` starts `croupier serve` (SQLite in a temp dir, a separate
process) that trusts a provider of the benchmark's own making (an RS256 key in a JWKS file)
and signs guests with its own key, then measures in one run, alternating short blocks so
that load from elsewhere on a shared machine hits every way alike:

- JoinTable: a seat on a fresh table (made before the clock starts), without a credential
  (the seat token comes back) or with a player's identity token (the server verifies it and
  binds the seat to the player).
- SubmitMove: a recorded Dou Dizhu deal replayed on tables joined beforehand (as
  bench.rpc_latency does), each move sent with the seat's token or with the identity token
  of the player the seat is bound to.

The identities are a guest token (signed by the server) and a provider token (RS256 from the
JWKS file); the server remembers a token it verified, so JoinTable is also measured with a
provider token never seen before on every call (its signature checked each time). Rows give the median latency, server CPU per call (from /proc) and their ratio
to the seat-token way measured in the same blocks' neighbours (medians over blocks).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import jwt
from croupier.v1 import croupier_pb2 as pb
from croupier.v1 import croupier_pb2_grpc as pb_grpc
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from bench.rpc_latency import Script, fixed_deal_options, free_port, process_cpu, wait_serving

REPO = Path(__file__).resolve().parent.parent
ISSUER = "https://bench.example/"
AUDIENCE = "croupier-bench"
SEAT, GUEST, PROVIDER = "seat token", "guest identity", "provider identity (RS256)"
FRESH = "provider identity, a new token each call"
WAYS = (SEAT, GUEST, PROVIDER)
JOIN_WAYS = (*WAYS, FRESH)
Md = tuple[tuple[str, str], ...]


def bearer(token: str) -> Md:
    return (("authorization", f"Bearer {token}"),)


@dataclass
class Block:
    """One block of calls of one RPC in one way: latencies and the server CPU they took."""

    latencies: list[float] = field(default_factory=list)
    cpu: float | None = None

    @property
    def p50_ms(self) -> float:
        return statistics.median(self.latencies) * 1000

    @property
    def cpu_us(self) -> float | None:
        return None if self.cpu is None else self.cpu / len(self.latencies) * 1e6


def provider_key(tmp: Path) -> tuple[rsa.RSAPrivateKey, Path]:
    """An RS256 key of the benchmark's own provider and its JWKS file."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = dict(RSAAlgorithm.to_jwk(key.public_key(), as_dict=True))
    jwk.update(kid="bench-1", alg="RS256", use="sig")
    path = tmp / "jwks.json"
    path.write_text(json.dumps({"keys": [jwk]}))
    return key, path


def provider_token(key: rsa.RSAPrivateKey, sub: str) -> str:
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": AUDIENCE, "sub": sub, "name": sub, "iat": now,
              "exp": now + 3600}
    return jwt.encode(claims, key, algorithm="RS256", headers={"kid": "bench-1"})


class Bench:
    def __init__(self, stub: pb_grpc.CroupierStub, cpu: Callable[[], float | None],
                 identities: dict[str, list[str]], mint: Callable[[int], str]) -> None:
        self.stub = stub
        self.cpu = cpu
        self.identities = identities  # way -> one identity token per seat
        self.mint = mint  # a provider token never sent before, for seat i's player

    def credential(self, way: str, seat: int) -> Md:
        if way == SEAT:
            return ()
        if way == FRESH:
            return bearer(self.mint(seat))
        return bearer(self.identities[way][seat])

    async def table(self) -> str:
        made = await self.stub.CreateTable(pb.CreateTableRequest(game="dou_dizhu",
                                                                 options=fixed_deal_options()))
        return made.table_id

    async def joined(self, way: str) -> tuple[str, dict[int, Md], int]:
        """A fresh table with every seat joined the given way; per seat the metadata its
        moves carry (the seat token, or the identity token)."""
        table_id = await self.table()
        auth: dict[int, Md] = {}
        version = 0
        for seat in range(3):
            reply = await self.stub.JoinTable(
                pb.JoinTableRequest(table_id=table_id, seat=seat, name=f"p{seat}"),
                metadata=self.credential(way, seat))
            auth[seat] = bearer(reply.token) if way == SEAT else self.credential(way, seat)
            version = reply.table.version
        return table_id, auth, version

    async def timed(self, body: Callable[[Block], Awaitable[None]]) -> Block:
        block = Block()
        before = self.cpu()
        await body(block)
        after = self.cpu()
        block.cpu = None if before is None or after is None else after - before
        return block

    async def join_block(self, way: str, n: int) -> Block:
        tables = [await self.table() for _ in range(n)]
        # signed before the clock starts: the server's verifying is timed, not our signing
        credentials = [self.credential(way, i % 3) for i in range(n)]

        async def body(block: Block) -> None:
            for i, table_id in enumerate(tables):
                seat = i % 3
                request = pb.JoinTableRequest(table_id=table_id, seat=seat, name=f"p{seat}")
                start = time.perf_counter()
                await self.stub.JoinTable(request, metadata=credentials[i])
                block.latencies.append(time.perf_counter() - start)

        return await self.timed(body)

    async def move_block(self, way: str, script: Script, deals: int) -> Block:
        tables = [await self.joined(way) for _ in range(deals)]

        async def body(block: Block) -> None:
            for table_id, auth, version in tables:
                for seat, move in script:
                    request = pb.SubmitMoveRequest(table_id=table_id, move=move,
                                                   expected_version=version)
                    start = time.perf_counter()
                    reply = await self.stub.SubmitMove(request, metadata=auth[seat])
                    block.latencies.append(time.perf_counter() - start)
                    version = reply.version

        return await self.timed(body)


async def record(stub: pb_grpc.CroupierStub) -> Script:
    """The deal replayed (bench.rpc_latency's, played once here with first legal moves)."""
    from bench.rpc_latency import record_deal

    return await record_deal(stub)


def report(results: dict[tuple[str, str], list[Block]]) -> str:
    lines = ["| RPC | credential | calls | p50 ms | p50 vs seat token | server CPU µs/call "
             "| CPU vs seat token |", "|---|---|---:|---:|---:|---:|---:|"]
    med = statistics.median
    for rpc, ways in (("JoinTable", JOIN_WAYS), ("SubmitMove", WAYS)):
        base = results[(rpc, SEAT)]
        for way in ways:
            blocks = results[(rpc, way)]
            calls = sum(len(b.latencies) for b in blocks)
            p50 = med(x for b in blocks for x in b.latencies) * 1000
            ratio = med(b.p50_ms / s.p50_ms for b, s in zip(blocks, base, strict=True))
            cpus = [(b.cpu_us, s.cpu_us) for b, s in zip(blocks, base, strict=True)]
            known = [(c, s) for c, s in cpus if c is not None and s]
            cpu_text = (f"{med(c for c, _ in known):.0f} | {med(c / s for c, s in known):.2f}x"
                        if known else "- | -")
            lines.append(f"| {rpc} | {way} | {calls} | {p50:.2f} | {ratio:.2f}x | {cpu_text} |")
    return "\n".join(lines)


async def run(rounds: int, joins: int, deals: int, keep_log: bool) -> str:
    tmp = Path(tempfile.mkdtemp(prefix="croupier-bench-identity-"))
    key, jwks_file = provider_key(tmp)
    address = f"127.0.0.1:{free_port()}"
    log_path = tmp / "server.log"
    with open(log_path, "wb") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "serve", "--listen", address,
             "--store", f"sqlite:{tmp / 'croupier.db'}", "--log-level", "warning",
             "--identity-jwks", str(jwks_file), "--identity-issuer", ISSUER,
             "--identity-audience", AUDIENCE, "--deal-pause-seconds", "0"],
            cwd=REPO, stdout=log, stderr=log, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        async with grpc.aio.insecure_channel(address) as channel:
            await wait_serving(channel)
            stub = pb_grpc.CroupierStub(channel)
            guests = [(await stub.CreateGuest(pb.CreateGuestRequest(name=f"guest{i}"))).token
                      for i in range(3)]
            identities = {GUEST: guests,
                          PROVIDER: [provider_token(key, f"bench-player-{i}") for i in range(3)]}
            for way in (GUEST, PROVIDER):  # each is accepted before anything is timed
                await stub.WhoAmI(pb.WhoAmIRequest(), metadata=bearer(identities[way][0]))
            minted = iter(range(10**9))

            def mint(seat: int) -> str:
                return provider_token(key, f"bench-fresh-{next(minted)}")

            bench = Bench(stub, process_cpu(server.pid), identities, mint)
            script = await record(stub)
            for way in JOIN_WAYS:  # warm-up, not counted
                await bench.join_block(way, 30)
            for way in WAYS:
                await bench.move_block(way, script, 1)
            results: dict[tuple[str, str], list[Block]] = {}
            for r in range(rounds):
                order = JOIN_WAYS if r % 2 == 0 else tuple(reversed(JOIN_WAYS))
                for way in order:
                    results.setdefault(("JoinTable", way), []).append(
                        await bench.join_block(way, joins))
                    if way in WAYS:
                        results.setdefault(("SubmitMove", way), []).append(
                            await bench.move_block(way, script, deals))
    finally:
        server.terminate()
        server.wait(30)
    if keep_log:
        print(f"server log: {log_path}", file=sys.stderr)
    return f"(the replayed deal has {len(script)} moves)\n\n" + report(results)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.identity_cost",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=8,
                        help="alternating rounds (each: every way once, the order reversed "
                        "every other round; default %(default)s)")
    parser.add_argument("--joins", type=int, default=150,
                        help="JoinTable calls per block (default %(default)s)")
    parser.add_argument("--deals", type=int, default=4,
                        help="recorded deals replayed per SubmitMove block (default "
                        "%(default)s)")
    parser.add_argument("--keep-log", action="store_true", help="print where the server log is")
    args = parser.parse_args(argv)
    print(f"identities vs seat tokens, {args.rounds} alternating rounds, one server process "
          f"(SQLite), {os.cpu_count()} CPUs shared with this client process; load average "
          f"{os.getloadavg()[0]:.2f} before")
    started = time.monotonic()
    print(asyncio.run(run(args.rounds, args.joins, args.deals, args.keep_log)))
    print(f"\n{time.monotonic() - started:.0f} s; load average {os.getloadavg()[0]:.2f} after")
    return 0


if __name__ == "__main__":
    sys.exit(main())
