"""`croupier tables`: a server's lobby (ListTables with its filters), one line per table, each
with the command that watches it. Uses only the public API, like the other clients."""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from collections.abc import Iterator, Sequence

import grpc
from croupier.v1 import croupier_pb2 as pb
from croupier.v1 import croupier_pb2_grpc as pb_grpc

from clients.server_address import add_server_flags, flags_problem, not_answering, open_channel
from common.channel import DEFAULT_SERVER

RPC_TIMEOUT = 15.0
STATUSES = {
    "waiting": pb.TABLE_STATUS_WAITING,
    "playing": pb.TABLE_STATUS_PLAYING,
    "finished": pb.TABLE_STATUS_FINISHED,
    "abandoned": pb.TABLE_STATUS_ABANDONED,
}
STATUS_NAMES = {v: k for k, v in STATUSES.items()}
HEADER = ("TABLE", "GAME", "SEATED", "STATUS", "AGE", "BOTS", "WATCH WITH")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="croupier tables",
        description="List a server's tables (newest first; waiting for a bot: the longest "
        "waiting first), one line each: id, game, seats taken of all, status, age, the levels "
        "of its bot seats, and the command that watches it.",
    )
    add_server_flags(p)
    p.add_argument("--game", default="",
                   help="only this game (its engine name, as ListGames gives it)")
    p.add_argument("--status", choices=sorted(STATUSES), default="",
                   help="only tables with this status (abandoned: those closed as abandoned)")
    p.add_argument("--waiting-for-bot", action="store_true",
                   help="only tables with a seat a bot may take now")
    p.add_argument("--bot-levels", default="", metavar="LEVEL,...",
                   help="with --waiting-for-bot: only tables with such a seat of these levels")
    p.add_argument("--include-abandoned", action="store_true",
                   help="also tables closed as abandoned (left out otherwise)")
    p.add_argument("--limit", type=int, default=0,
                   help="tables per page (the server's default: 100; at most 500)")
    p.add_argument("--all", action="store_true", dest="every_page",
                   help="page through every page, not just the first")
    return p


def request_of(args: argparse.Namespace) -> pb.ListTablesRequest:
    levels = [level.strip() for level in args.bot_levels.split(",") if level.strip()]
    return pb.ListTablesRequest(
        game=args.game,
        status=STATUSES.get(args.status, pb.TABLE_STATUS_UNSPECIFIED),
        waiting_for_bot=args.waiting_for_bot,
        bot_levels=levels,
        limit=args.limit,
        include_abandoned=args.include_abandoned,
    )


def pages(
    stub: pb_grpc.CroupierStub, request: pb.ListTablesRequest, every_page: bool
) -> Iterator[pb.ListTablesResponse]:
    """The first page, and with `every_page` each following one (by next_page_token)."""
    while True:
        reply = stub.ListTables(request, timeout=RPC_TIMEOUT)
        yield reply
        if not every_page or not reply.next_page_token:
            return
        following = pb.ListTablesRequest()
        following.CopyFrom(request)
        following.page_token = reply.next_page_token
        request = following


def age(seconds: float) -> str:
    """A short age: 42s, 5m07s, 3h05m, 2d04h.

    >>> age(42.4), age(307), age(3 * 3600 + 300), age(2 * 86400 + 4 * 3600 + 59)
    ('42s', '5m07s', '3h05m', '2d04h')
    """
    s = max(0, int(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    if s < 86400:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 86400}d{s % 86400 // 3600:02d}h"


def watch_command(table_id: str, args: argparse.Namespace) -> str:
    """`croupier watch ID`, with the flags that reach this server when they are not the
    defaults `croupier watch` would use."""
    words = ["croupier", "watch", table_id]
    if args.server != DEFAULT_SERVER:
        words += ["--server", args.server]
    for flag, value in (("--tls-ca", args.tls_ca), ("--tls-cert", args.tls_cert),
                        ("--tls-key", args.tls_key)):
        if value:
            words += [flag, value]
    return shlex.join(words)


def bot_levels(table: pb.Table) -> str:
    """The entrants (levels) of its bot seats, each once, in seat order; '-' when it has none."""
    levels = dict.fromkeys(s.entrant or s.bot_level for s in table.seats
                           if s.kind == pb.SEAT_KIND_BOT)
    return ",".join(levels) or "-"


def row(table: pb.Table, args: argparse.Namespace, now: float) -> tuple[str, ...]:
    seated = sum(1 for s in table.seats if s.occupied)
    status = STATUS_NAMES.get(table.status, str(table.status))
    return (table.table_id, table.game, f"{seated}/{table.players}", status,
            age(now - table.created_at), bot_levels(table), watch_command(table.table_id, args))


def lines(rows: Sequence[tuple[str, ...]]) -> list[str]:
    """The rows under the header, in columns as wide as their widest cell."""
    every = [HEADER, *rows]
    widths = [max(len(r[i]) for r in every) for i in range(len(HEADER))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
            for r in every]


def main(argv: list[str] | None = None) -> int:
    """0 when the server answered (even with no tables), 1 on an error from it, 2 on bad
    flags."""
    args = parser().parse_args(argv)
    problem = flags_problem(args.server, args.tls_ca, args.tls_cert, args.tls_key)
    if problem:
        print(f"croupier tables: {problem}", file=sys.stderr)
        return 2
    channel = open_channel(args.server, args.tls_ca, args.tls_cert, args.tls_key)
    silent = not_answering(channel, args.server, args.tls_ca)
    if silent:
        channel.close()
        print(f"croupier tables: {silent}", file=sys.stderr)
        return 1
    rows: list[tuple[str, ...]] = []
    more = False
    try:
        with channel:
            stub = pb_grpc.CroupierStub(channel)
            now = time.time()
            for reply in pages(stub, request_of(args), args.every_page):
                rows += [row(t, args, now) for t in reply.tables]
                more = bool(reply.next_page_token)
    except grpc.RpcError as error:
        code = error.code()
        details = error.details()
        print(f"Error from {args.server}: {code.name}: {details}", file=sys.stderr)
        return 1
    if not rows:
        print("No tables.")
        return 0
    print("\n".join(lines(rows)))
    if more:
        print("(more tables: --all lists every page)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
