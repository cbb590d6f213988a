"""`croupier play` and `croupier watch`: terminal clients of the public gRPC API.

They use only the API (never the engines' internals), so they double as a reference for
frontend authors: create a table, join it, follow StreamTable, answer when the seat is to act,
and retry with the server's message when a move is refused.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator

import grpc
from croupier.v1 import croupier_pb2, croupier_pb2_grpc
from google.protobuf import struct_pb2
from google.protobuf.message import Message
from rich.console import Console
from rich.text import Text

from bots.channel import add_tls_flags, check_tls_files, credentials
from engines.contract import option_argument
from service.render import (  # noqa: F401  (generic_lines re-exported)
    GENERIC,
    Renderer,
    generic_lines,
    renderer_for,
    seat_label,
    signed,
)
from service.render.dou_dizhu import hand_text  # noqa: F401  (re-exported)

DEFAULT_SERVER = "127.0.0.1:50051"
RPC_TIMEOUT = 15.0
RECONNECT_FOR = 60.0  # seconds a client keeps trying to reach a restarting server
CHANNEL_OPTIONS = (
    ("grpc.initial_reconnect_backoff_ms", 200),
    ("grpc.min_reconnect_backoff_ms", 200),
    ("grpc.max_reconnect_backoff_ms", 2000),
)
KIND_NAMES = {
    croupier_pb2.EVENT_KIND_CREATED: "created",
    croupier_pb2.EVENT_KIND_JOINED: "joined",
    croupier_pb2.EVENT_KIND_LEFT: "left",
    croupier_pb2.EVENT_KIND_MOVE: "move",
    croupier_pb2.EVENT_KIND_END: "end",
    croupier_pb2.EVENT_KIND_SEATS_OPENED: "seats opened",
}


class ClientError(Exception):
    """A failure to report to the user in one line (exit status 1)."""


# --- formatting (pure functions of the API messages) ------------------------------------


def scores_lines(
    result: croupier_pb2.Result, table: croupier_pb2.Table, me: int | None, *, last_deal: bool
) -> list[str]:
    values = result.last_deal if last_deal else result.totals
    return [f"  {seat_label(table, seat, me)}: {signed(v)}" for seat, v in enumerate(values)]


def game_view(view: croupier_pb2.TableView) -> tuple[Message | None, Renderer]:
    """The game-specific view message inside a TableView (or None) and its terminal layout."""
    which = view.view.WhichOneof("game")
    if not which:
        return None, GENERIC
    return getattr(view.view, which), renderer_for(which)


def public_lines(view: croupier_pb2.TableView, me: int | None) -> list[str]:
    message, renderer = game_view(view)
    return [] if message is None else renderer.public(message, view.table, me)


def stage_of(view: croupier_pb2.TableView) -> tuple[object, ...]:
    """What changes rarely in a view (deal, phase): watch shows it in full then."""
    message, renderer = game_view(view)
    return () if message is None else renderer.stage(message)


def public_summary(view: croupier_pb2.TableView) -> str:
    """One line of what changes move by move, for spectators."""
    message, renderer = game_view(view)
    return "" if message is None else renderer.summary(message, view.table)


def numbered(moves: Iterable[str], width: int) -> list[str]:
    """Legal moves as '  1) pass' cells laid out in columns that fit the terminal."""
    cells = [f"{i:>3}) {m}" for i, m in enumerate(moves, 1)]
    if not cells:
        return []
    cell = max(len(c) for c in cells) + 2
    per_row = max(1, width // cell)
    return [
        "".join(c.ljust(cell) for c in cells[i : i + per_row]).rstrip()
        for i in range(0, len(cells), per_row)
    ]


# --- connection helpers -----------------------------------------------------------------


def connect(
    server: str, tls_ca: str = "", tls_cert: str = "", tls_key: str = ""
) -> tuple[grpc.Channel, croupier_pb2_grpc.CroupierStub]:
    """A channel (TLS when a CA is given) whose threads never take Ctrl-C.

    gRPC starts its threads with the channel. A process-wide SIGINT may be delivered to any
    thread that does not block it; when one of gRPC's got it, the main thread stayed asleep in
    `input()` and Ctrl-C did nothing until the next key. The threads inherit the signal mask
    of their creator, so SIGINT is blocked while the channel is made.
    """
    main = threading.current_thread() is threading.main_thread()
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}) if main else None
    try:
        if tls_ca:
            creds = credentials(tls_ca, tls_cert, tls_key)
            channel = grpc.secure_channel(server, creds, options=CHANNEL_OPTIONS)
        else:
            channel = grpc.insecure_channel(server, options=CHANNEL_OPTIONS)
    finally:
        if before is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)
    return channel, croupier_pb2_grpc.CroupierStub(channel)


def _connect(args: argparse.Namespace) -> tuple[grpc.Channel, croupier_pb2_grpc.CroupierStub]:
    problem = check_tls_files(args.tls_ca, args.tls_cert, args.tls_key)
    if problem:
        print(f"croupier: {problem}", file=sys.stderr)
        raise SystemExit(2)
    return connect(args.server, args.tls_ca, args.tls_cert, args.tls_key)


def retrying_stream(
    stub: croupier_pb2_grpc.CroupierStub,
    table_id: str,
    metadata: tuple[tuple[str, str], ...],
    from_version: int,
    say: Callable[[str], None],
) -> Iterator[croupier_pb2.TableEvent]:
    """Events after `from_version`, reconnecting (from the last version seen) if the server
    goes away for less than RECONNECT_FOR seconds; ends after the END event."""
    last = from_version
    down_since: float | None = None
    while True:
        try:
            for event in stub.StreamTable(
                croupier_pb2.StreamTableRequest(table_id=table_id, from_version=last),
                metadata=metadata,
                wait_for_ready=down_since is not None,
            ):
                if down_since is not None:
                    say("Reconnected.")
                    down_since = None
                last = max(last, event.version)
                yield event
                if event.kind == croupier_pb2.EVENT_KIND_END:
                    return
            # The stream closed without END (server shutting down): resume.
            problem = "the server closed the stream"
        except grpc.RpcError as error:
            if error.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED,
                                    grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.INTERNAL,
                                    grpc.StatusCode.UNKNOWN):
                raise ClientError(error.details() or error.code().name) from None
            problem = error.details() or error.code().name
        now = time.monotonic()
        if down_since is None:
            down_since = now
            say(f"Connection lost ({problem}); reconnecting...")
        elif now - down_since > RECONNECT_FOR:
            raise ClientError(f"lost the server for over {RECONNECT_FOR:.0f} s: {problem}")
        time.sleep(0.5)


def rpc_error(error: grpc.RpcError) -> str:
    return f"{error.details() or error.code().name} ({error.code().name})"


# --- croupier play -----------------------------------------------------------------------


class Player:
    """One human at one seat: prints the table's events and asks for moves on its turn."""

    def __init__(
        self,
        console: Console,
        stub: croupier_pb2_grpc.CroupierStub,
        table_id: str,
        seat: int,
        token: str,
    ) -> None:
        self.console = console
        self.stub = stub
        self.table_id = table_id
        self.seat = seat
        self.metadata = (("authorization", f"Bearer {token}"),)
        self.known = 0  # newest version known: views older than it are stale
        self.waiting_said = False

    def say(self, text: str, style: str | None = None) -> None:
        self.console.print(Text(text, style=style or ""))

    def leave(self) -> None:
        """Give the seat back when the person quits mid-match (best effort)."""
        with contextlib.suppress(grpc.RpcError):
            self.stub.LeaveTable(
                croupier_pb2.LeaveTableRequest(table_id=self.table_id), metadata=self.metadata,
                timeout=3.0,
            )

    def run(self) -> int:
        view = self.stub.GetView(
            croupier_pb2.GetViewRequest(table_id=self.table_id), metadata=self.metadata,
            timeout=RPC_TIMEOUT,
        )
        self.known = view.version
        self.take_turns(view)
        for event in retrying_stream(self.stub, self.table_id, self.metadata, view.version,
                                     self.say):
            self.show_event(event)
            if event.kind == croupier_pb2.EVENT_KIND_END:
                self.show_final(event.view)
                return 0
            if event.version >= self.known:
                self.known = event.version
                self.take_turns(event.view)
        return 0

    def show_event(self, event: croupier_pb2.TableEvent) -> None:
        table = event.view.table
        who = seat_label(table, event.seat, self.seat)
        if event.kind == croupier_pb2.EVENT_KIND_MOVE:
            self.say(f"{who}: {event.move}", "bold" if event.seat == self.seat else None)
        elif event.kind == croupier_pb2.EVENT_KIND_JOINED and event.seat != self.seat:
            self.say(f"{who} joined" + (f" as {event.name}" if event.name else ""), "dim")
        elif event.kind == croupier_pb2.EVENT_KIND_LEFT:
            self.say(f"{who} left the table", "dim")
        if event.deal_over:
            self.show_deal_over(event.view)

    def show_deal_over(self, view: croupier_pb2.TableView) -> None:
        self.say("Deal over. Scores of the deal:", "bold")
        message, renderer = game_view(view)
        if message is not None:
            for line in renderer.deal_over(message, view.table, self.seat):
                self.say(line)
        for line in scores_lines(view.result, view.table, self.seat, last_deal=True):
            self.say(line)

    def show_final(self, view: croupier_pb2.TableView) -> None:
        result = view.result
        deals = f" after {result.deals_played} deal(s)" if result.deals_played else ""
        self.say(f"Game over{deals}. Final scores:", "bold")
        for line in scores_lines(result, view.table, self.seat, last_deal=False):
            self.say(line)
        if result.winners:
            names = ", ".join(seat_label(view.table, w, self.seat) for w in result.winners)
            verdict = "You win!" if self.seat in result.winners else "You lose."
            self.say(f"Winner(s): {names}. {verdict}", "bold green" if "win" in verdict else "bold")

    def my_turn(self, view: croupier_pb2.TableView) -> bool:
        return (
            self.seat in view.to_act
            and bool(view.legal_moves)
            and view.version >= self.known
            and view.table.status != croupier_pb2.TABLE_STATUS_FINISHED
        )

    def take_turns(self, view: croupier_pb2.TableView) -> None:
        if view.table.status == croupier_pb2.TABLE_STATUS_WAITING:
            if not self.waiting_said:
                self.say("Waiting for the other seats to be taken (bot seats are taken by "
                         "`croupier bots` workers connected to this server)...", "dim")
                self.waiting_said = True
            return
        while self.my_turn(view):
            answer = self.ask(view)
            if answer is None:
                return
            self.known = max(self.known, answer.version)
            if not answer.HasField("view") or answer.view.version < answer.version:
                return
            view = answer.view

    def show_turn(self, view: croupier_pb2.TableView) -> None:
        self.console.rule(Text("Your turn", style="bold"))
        for line in public_lines(view, self.seat):
            self.say(line)
        message, renderer = game_view(view)
        if message is not None:
            for text, style in renderer.turn(message, view.table, self.seat):
                self.say(text, style)
        self.show_moves(view)

    def show_moves(self, view: croupier_pb2.TableView) -> None:
        self.say("Legal moves:")
        width = max(40, shutil.get_terminal_size((80, 24)).columns)
        for line in numbered(view.legal_moves, width):
            self.say(line)
        count = len(view.legal_moves)
        clash = next((m for m in view.legal_moves
                      if m.isascii() and m.isdigit() and 1 <= int(m) <= count), None)
        if clash:
            self.say(f"(A number picks from this list; type ={clash} to play the move {clash}.)",
                     "dim")

    def resolve(self, text: str, moves: list[str]) -> str | None:
        """The move meant by `text`: a number picks from the list (when in range), `=TEXT`
        forces notation (some moves, like the single 3, are numbers), anything else is sent
        as notation for the server to judge."""
        if text.startswith("="):
            return text[1:].strip() or None
        if text.isascii() and text.isdigit():
            index = int(text)
            if 1 <= index <= len(moves):
                return moves[index - 1]
            if text in moves:
                return text
            self.say(f"No move numbered {index}: choose 1 to {len(moves)}.", "red")
            return None
        return text

    def ask(self, view: croupier_pb2.TableView) -> croupier_pb2.SubmitMoveResponse | None:
        """Prompt until the server accepts a move; None if the table moved on meanwhile."""
        self.show_turn(view)
        moves = list(view.legal_moves)
        while True:
            span = "1" if len(moves) == 1 else f"1-{len(moves)}"
            text = input(f"Your move ({span} or notation, ? to list): ").strip()
            if not text:
                continue
            if text in ("?", "help"):
                self.show_moves(view)
                continue
            resolved = self.resolve(text, moves)
            if resolved is None:
                continue
            text = resolved
            try:
                return self.stub.SubmitMove(
                    croupier_pb2.SubmitMoveRequest(
                        table_id=self.table_id, move=text, expected_version=view.version
                    ),
                    metadata=self.metadata,
                    timeout=RPC_TIMEOUT,
                )
            except grpc.RpcError as error:
                self.say(f"Refused: {rpc_error(error)}", "red")
                if error.code() in (grpc.StatusCode.ABORTED, grpc.StatusCode.UNAVAILABLE):
                    try:
                        view = self.stub.GetView(
                            croupier_pb2.GetViewRequest(table_id=self.table_id),
                            metadata=self.metadata, timeout=RPC_TIMEOUT, wait_for_ready=True,
                        )
                    except grpc.RpcError as again:
                        raise ClientError(rpc_error(again)) from None
                    self.known = max(self.known, view.version)
                    if not self.my_turn(view):
                        return None
                    self.show_turn(view)
                    moves = list(view.legal_moves)


def play_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="croupier play",
        description="Play a game in the terminal: you take seat 0, bots take the others.",
    )
    parser.add_argument("game", help="game to play, e.g. dou_dizhu")
    _server_flag(parser)
    parser.add_argument("--name", default=os.environ.get("USER") or "player",
                        help="your name at the table (default: $USER)")
    parser.add_argument("--bots", default="medium", metavar="LEVEL",
                        help="level of the bots in the other seats (default %(default)s)")
    parser.add_argument("--players", type=int, default=0,
                        help="number of players (default: the game's minimum)")
    parser.add_argument("--option", action="append", type=option_argument, default=[],
                        metavar="NAME=VALUE", help="a table option (repeatable), e.g. deals=1")
    parser.add_argument("--api-key", default=os.environ.get("CROUPIER_API_KEY", ""),
                        help="API key with the 'tables' role, for servers run with --api-keys "
                        "(env CROUPIER_API_KEY)")
    return parser


def _server_flag(parser: argparse.ArgumentParser) -> None:
    """--server and the TLS flags (as `croupier bots` and `croupier tournament` have them)."""
    parser.add_argument(
        "--server",
        default=os.environ.get("CROUPIER_SERVER", DEFAULT_SERVER),
        help="server address host:port (env CROUPIER_SERVER; default %(default)s)",
    )
    add_tls_flags(parser)


def play_main(argv: list[str] | None = None) -> int:
    """`croupier play`: 0 when the match was played to the end."""
    args = play_parser().parse_args(argv)
    console = Console(highlight=False)
    channel, stub = _connect(args)
    try:
        with channel:
            games = stub.ListGames(croupier_pb2.ListGamesRequest(), timeout=RPC_TIMEOUT,
                                   wait_for_ready=True)
            info = next((g for g in games.games if g.name == args.game), None)
            if info is None:
                known = ", ".join(sorted(g.name for g in games.games))
                raise ClientError(f"unknown game {args.game!r}; known games: {known}")
            players = args.players or info.min_players
            options = struct_pb2.Struct()
            options.update(dict(args.option))
            bot = croupier_pb2.SeatSpec(kind=croupier_pb2.SEAT_KIND_BOT, bot_level=args.bots)
            seats = [croupier_pb2.SeatSpec(kind=croupier_pb2.SEAT_KIND_HUMAN)] + [bot] * (players - 1)
            table = stub.CreateTable(
                croupier_pb2.CreateTableRequest(
                    game=args.game, players=players, options=options, seats=seats
                ),
                metadata=(("x-api-key", args.api_key),) if args.api_key else None,
                timeout=RPC_TIMEOUT,
            )
            joined = stub.JoinTable(
                croupier_pb2.JoinTableRequest(table_id=table.table_id, seat=0, name=args.name),
                timeout=RPC_TIMEOUT,
            )
            console.print(Text(
                f"{info.title or info.name}: table {table.table_id}, you are seat {joined.seat}; "
                f"{players - 1} {args.bots} bot(s) in the other seats.", style="bold"))
            console.print(Text(f"Others can follow with: croupier watch {table.table_id}",
                               style="dim"))
            if info.notation:
                console.print(Text(f"Notation: {info.notation}", style="dim"))
            player = Player(console, stub, table.table_id, joined.seat, joined.token)
            try:
                return player.run()
            except (EOFError, KeyboardInterrupt):
                player.leave()
                raise
    except ClientError as error:
        console.print(Text(f"Error: {error}", style="bold red"))
        return 1
    except grpc.RpcError as error:
        console.print(Text(f"Error from {args.server}: {rpc_error(error)}", style="bold red"))
        return 1
    except (EOFError, KeyboardInterrupt):
        console.print(Text("\nLeft the game.", style="dim"))
        return 130


# --- croupier watch ----------------------------------------------------------------------


def watch_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="croupier watch",
        description="Follow a table as a spectator: every event with the public view, to the end.",
    )
    parser.add_argument("table_id", metavar="TABLE_ID", help="the table to watch")
    _server_flag(parser)
    parser.add_argument("--from-version", type=int, default=0,
                        help="show events after this version (default: from the start)")
    return parser


def describe_event(event: croupier_pb2.TableEvent) -> str:
    """One line per event: version, kind, who and what."""
    table = event.view.table
    kind = KIND_NAMES.get(event.kind, str(event.kind))
    who = seat_label(table, event.seat)
    if event.kind == croupier_pb2.EVENT_KIND_MOVE:
        body = f"{who}: {event.move}"
    elif event.kind == croupier_pb2.EVENT_KIND_JOINED:
        body = f"{who} joined" + (f" as {event.name}" if event.name else "")
    elif event.kind == croupier_pb2.EVENT_KIND_LEFT:
        body = f"{who} left"
    elif event.kind == croupier_pb2.EVENT_KIND_CREATED:
        body = f"table {table.table_id} created ({table.game}, {table.players} players)"
    elif event.kind == croupier_pb2.EVENT_KIND_END:
        body = "match over"
    elif event.kind == croupier_pb2.EVENT_KIND_SEATS_OPENED:
        body = "empty seats handed to bots"
    else:
        body = event.move or ""
    return f"[v{event.version}] {kind}: {body}"


def watch_main(argv: list[str] | None = None) -> int:
    """`croupier watch`: 0 once the table's END event was shown."""
    args = watch_parser().parse_args(argv)
    console = Console(highlight=False)

    def say(text: str, style: str | None = None) -> None:
        console.print(Text(text, style=style or ""))

    channel, stub = _connect(args)
    try:
        with channel:
            stub.GetView(croupier_pb2.GetViewRequest(table_id=args.table_id),
                         timeout=RPC_TIMEOUT, wait_for_ready=True)
            stage = None
            for event in retrying_stream(stub, args.table_id, (), args.from_version, say):
                say(describe_event(event), "bold" if event.kind != croupier_pb2.EVENT_KIND_MOVE
                    else None)
                # The full public picture when the stage changes (new deal, phase, landlord),
                # otherwise one line with what moved: hand sizes, combination to beat, bids.
                now = stage_of(event.view)
                if now != stage:
                    stage = now
                    for line in public_lines(event.view, None):
                        say(f"    {line}", "dim")
                else:
                    summary = public_summary(event.view)
                    if summary:
                        say(f"    {summary}", "dim")
                if event.deal_over:
                    say("  Deal over:", "bold")
                    for line in scores_lines(event.view.result, event.view.table, None,
                                             last_deal=True):
                        say(line)
                if event.kind == croupier_pb2.EVENT_KIND_END:
                    result = event.view.result
                    say("Final scores:", "bold")
                    for line in scores_lines(result, event.view.table, None, last_deal=False):
                        say(line)
                    if result.winners:
                        names = ", ".join(seat_label(event.view.table, w) for w in result.winners)
                        say(f"Winner(s): {names}", "bold")
                    return 0
            return 0
    except ClientError as error:
        say(f"Error: {error}", "bold red")
        return 1
    except grpc.RpcError as error:
        say(f"Error from {args.server}: {rpc_error(error)}", "bold red")
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "play":
        sys.exit(play_main(sys.argv[2:]))
    if command == "watch":
        sys.exit(watch_main(sys.argv[2:]))
    sys.exit("usage: python -m service.terminal {play,watch} ...")
