"""`croupier play` and `croupier watch`: terminal clients of the public gRPC API.

They use only the API (never the engines' internals), so they double as a reference for
frontend authors: create a table, join it, follow StreamTable, ask for a move when the table
waits for the seat (optional moves are offered, never asked for), send a move overtaken by
another seat's optional move again (common.resend), show the server's reason for any other
refusal, and give the seat back on leaving.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import queue
import select
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator

import grpc
from croupier.v1 import croupier_pb2, croupier_pb2_grpc
from google.protobuf.message import Message
from rich.console import Console
from rich.text import Text

from clients.identity_file import TOKEN_FILE_ENV, Identity, IdentityError, identity_for
from clients.render import (  # noqa: F401  (generic_lines re-exported)
    GENERIC,
    Renderer,
    generic_lines,
    plural,
    renderer_for,
    seat_label,
    signed,
)
from clients.seating import (
    Seated,
    SeatingError,
    game_info,
    given_table,
    matched_table,
    own_table,
)
from clients.server_address import (
    add_server_flags,
    flags_problem,
    not_answering,
    open_channel,
    parse_server,
)
from clients.ticket_wait import Cancelled, MatchError
from common.channel import DEFAULT_SERVER, add_key_flags, api_key_of
from common.resend import resend
from engines.contract import option_argument

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
    croupier_pb2.EVENT_KIND_READY: "ready for the next deal",
    croupier_pb2.EVENT_KIND_DEAL_STARTS: "the next deal starts",
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


def winners_word(winners: Iterable[int]) -> str:
    return "Winner" if len(list(winners)) == 1 else "Winners"


def numbered(moves: Iterable[str], width: int) -> list[str]:
    """Legal moves as ' #1) pass' cells laid out in columns that fit the terminal. The '#'
    tells a list entry from a move that is a number (a card's value played alone)."""
    cells = [f"{'#' + str(i):>3}) {m}" for i, m in enumerate(moves, 1)]
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
    """A channel to `server` (host:port, http:// or https://; TLS with a CA or https) whose
    threads never take Ctrl-C. ValueError for an address that is none of those.

    gRPC starts its threads with the channel. A process-wide SIGINT may be delivered to any
    thread that does not block it; when one of gRPC's got it, the main thread stayed asleep in
    `input()` and Ctrl-C did nothing until the next key. The threads inherit the signal mask
    of their creator, so SIGINT is blocked while the channel is made.
    """
    main = threading.current_thread() is threading.main_thread()
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}) if main else None
    try:
        channel = open_channel(server, tls_ca, tls_cert, tls_key, CHANNEL_OPTIONS)
    finally:
        if before is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)
    return channel, croupier_pb2_grpc.CroupierStub(channel)


def _connect(args: argparse.Namespace) -> tuple[grpc.Channel, croupier_pb2_grpc.CroupierStub]:
    """`connect` for a command line: a bad address or TLS file exits 2, and no server
    answering within about two seconds exits 1, each with a line that says why."""
    problem = flags_problem(args.server, args.tls_ca, args.tls_cert, args.tls_key)
    if problem:
        print(f"croupier: {problem}", file=sys.stderr)
        raise SystemExit(2)
    channel, stub = connect(args.server, args.tls_ca, args.tls_cert, args.tls_key)
    silent = not_answering(channel, args.server, args.tls_ca)
    if silent:
        channel.close()
        print(f"croupier: {silent}", file=sys.stderr)
        raise SystemExit(1)
    return channel, stub


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


class Quit(Exception):
    """The person left: 'quit', the end of input, or a hang-up."""


QUIT_WORDS = ("quit", "exit", "leave")
RETRY_CODES = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
SUBMIT_ATTEMPTS = 8  # a move sent again as it was while the server is away (~15 s)


def quiet_thread(target: Callable[[], None]) -> threading.Thread:
    """A daemon thread started with Ctrl-C and the quitting signals blocked, so that they
    always reach the main thread (see `connect`)."""
    signals = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
    main = threading.current_thread() is threading.main_thread()
    before = signal.pthread_sigmask(signal.SIG_BLOCK, signals) if main else None
    try:
        thread = threading.Thread(target=target, daemon=True)
        thread.start()
    finally:
        if before is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)
    return thread


class Player:
    """One person at one seat: prints the table's events as they come, asks for a move when
    the table waits for this seat, and takes a typed line at any time.

    Moves the seat may make but need not (announcements, calls and catches, calls of a
    forgetting) are never asked for: they are offered on a line of their own and may be typed
    whenever they are legal. Events arrive on a thread of their own; everything else (the
    screen, the RPCs that move) happens on the main thread, which waits on both the input and
    the events with select().
    """

    def __init__(
        self,
        console: Console,
        stub: croupier_pb2_grpc.CroupierStub,
        table_id: str,
        seat: int,
        token: str,
        stdin: int = 0,
        auto_end: bool = False,
    ) -> None:
        self.console = console
        self.stub = stub
        self.table_id = table_id
        self.seat = seat
        self.metadata = (("authorization", f"Bearer {token}"),)
        self.stdin = stdin
        self.auto_end = auto_end  # the person's opt-in: end the turn when nothing else is left
        self.known = 0  # newest version known: views older than it are stale
        self.view: croupier_pb2.TableView | None = None  # the newest view, at `known` or older
        self.waiting_said = False
        self.turn_shown: tuple[object, ...] | None = None  # the turn on screen, if any
        self.also_shown: tuple[str, ...] = ()  # the optional moves last offered
        self.prompt_open = False  # the prompt ends the screen's last line
        self.typed = ""  # input read but not yet ended by a newline
        self.inbox: queue.Queue[tuple[str, object]] = queue.Queue()
        self.stopping = threading.Event()
        self.wake_r, self.wake_w = os.pipe()

    # --- screen ----------------------------------------------------------------------

    def say(self, text: str, style: str | None = None) -> None:
        if self.prompt_open:  # never write after the prompt: start a line of its own
            self.console.print()
            self.prompt_open = False
        self.console.print(Text(text, style=style or ""))

    def prompt(self, moves: list[str], view: croupier_pb2.TableView) -> None:
        if len(moves) == 1:  # a forced move: Enter plays it
            ask = f"Enter for {self.label(view, moves[0])}, #1 or notation, ? to list"
        else:
            ask = f"#1-#{len(moves)} or notation, ? to list"
        self.console.print(Text(f"Your move ({ask}): "), end="")
        self.console.file.flush()
        self.prompt_open = True

    # --- the seat's moves --------------------------------------------------------------

    def current(self) -> croupier_pb2.TableView | None:
        """The view to act on: None while a newer version is known but not yet seen (a move
        of ours was accepted and its event is on its way)."""
        view = self.view
        if view is None or view.version < self.known:
            return None
        if view.table.status == croupier_pb2.TABLE_STATUS_FINISHED or view.result.finished:
            return None
        return view

    def split(self, view: croupier_pb2.TableView) -> tuple[list[str], list[str]]:
        """(the moves of this seat's turn, in the order listed; the optional ones)."""
        legal = list(view.legal_moves)
        if not legal or view.table.status == croupier_pb2.TABLE_STATUS_WAITING:
            return [], []
        message, renderer = game_view(view)
        waited = view.on_turn or view.to_act  # a server without on_turn: every actor waited
        if self.seat not in waited:
            return [], legal
        optional = renderer.optional(message, legal) if message is not None else []
        turn = [m for m in legal if m not in optional]
        if not turn:  # nothing but optional moves: they are not the turn
            return [], legal
        return (renderer.order(message, turn) if message is not None else turn), optional

    def label(self, view: croupier_pb2.TableView, move: str) -> str:
        message, renderer = game_view(view)
        return move if message is None else renderer.label(message, move)

    def also_line(self, view: croupier_pb2.TableView, optional: list[str]) -> str:
        message, renderer = game_view(view)
        if message is None:
            return GENERIC.also(view, view.table, self.seat, optional)
        return renderer.also(message, view.table, self.seat, optional)

    def refresh(self) -> None:
        """Brings the screen up to the newest view: the turn when it starts or its moves
        change, the optional moves when they change, the prompt while the turn lasts."""
        view = self.current()
        if view is None:
            return
        if view.table.status == croupier_pb2.TABLE_STATUS_WAITING:
            if not self.waiting_said:
                self.say("Waiting for the other seats to be taken (bot seats are taken by "
                         "`croupier bots` workers connected to this server)...", "dim")
                self.waiting_said = True
            return
        turn, optional = self.split(view)
        if not turn:
            self.turn_shown = None
            if optional and tuple(optional) != self.also_shown:
                self.say(self.also_line(view, optional), "dim")
            self.also_shown = tuple(optional)
            return
        if self.auto_end and self.end_by_itself(view, turn):
            return
        key = (tuple(view.on_turn), tuple(turn))
        if key != self.turn_shown:
            self.show_turn(view, turn, optional)
            self.turn_shown = key
        elif tuple(optional) != self.also_shown and optional:
            self.say(self.also_line(view, optional), "dim")
        self.also_shown = tuple(optional)
        if not self.prompt_open:
            self.prompt(turn, view)

    def end_by_itself(self, view: croupier_pb2.TableView, turn: list[str]) -> bool:
        """With --auto-end: plays the end of the turn when it is all the player may do (the
        game's renderer says which move that is). True if it was sent."""
        message, renderer = game_view(view)
        move = renderer.auto_end(message, turn) if message is not None else None
        if move is None:
            return False
        self.say(f"Nothing left to do but end your turn: {move} (--auto-end).", "dim")
        self.send(move, view)
        return True

    def show_turn(self, view: croupier_pb2.TableView, turn: list[str], optional: list[str]) -> None:
        self.say("")
        self.console.rule(Text("Your turn", style="bold"))
        for line in public_lines(view, self.seat):
            self.say(line)
        message, renderer = game_view(view)
        if message is not None:
            for text, style in renderer.turn(message, view.table, self.seat):
                self.say(text, style)
        self.show_moves(view, turn, optional)

    def show_moves(self, view: croupier_pb2.TableView, turn: list[str], optional: list[str]) -> None:
        if turn:
            self.say("Legal moves:")
            width = max(40, shutil.get_terminal_size((80, 24)).columns)
            for line in numbered([self.label(view, m) for m in turn], width):
                self.say(line)
        if optional:
            self.say(self.also_line(view, optional), "dim")
        if not turn and not optional:
            self.say("Nothing to play now: the table waits for another seat.", "dim")

    def resolve(self, text: str, view: croupier_pb2.TableView) -> str | None:
        """The move meant by `text`: '#N' picks from the list; '=TEXT' is notation as typed;
        a legal move as listed or in notation is that move (so a number that is a legal
        move, like a single 5, is the move); a bare number picks from the list in games
        without such moves; anything else is sent for the server to judge."""
        turn, optional = self.split(view)
        message, renderer = game_view(view)
        if text.startswith("#"):
            n = text[1:].strip()
            if n.isascii() and n.isdigit() and 1 <= int(n) <= len(turn):
                return turn[int(n) - 1]
            if not turn:
                self.say(f"Refused: no list to pick {text} from: it is not your turn.", "red")
            else:
                self.say(f"Refused: no move {text}: the list goes from #1 to #{len(turn)}.", "red")
            return None
        if text.startswith("="):
            return text[1:].strip() or None
        typed = text if message is None else renderer.typed(text)
        wanted = typed.casefold()
        for move in turn + optional:
            shown = self.label(view, move)
            if wanted in (move.casefold(), (renderer.typed(shown) if message else shown).casefold()):
                return move
        if text.isascii() and text.isdigit() and not renderer.numbers_are_moves and turn:
            if 1 <= int(text) <= len(turn):
                return turn[int(text) - 1]
            self.say(f"Refused: no move {text}: the list goes from #1 to #{len(turn)}.", "red")
            return None
        return typed

    def handle_line(self, text: str) -> None:
        """One line the person typed, whenever it came."""
        view = self.current()
        if text.casefold() in QUIT_WORDS and not (view and text in view.legal_moves):
            raise Quit(text)
        if not text and view is not None and view.next_deal_at:
            self.ready_for_next_deal()  # the pause between deals: "Enter to start it now"
            return
        if not text:
            turn = self.split(view)[0] if view is not None else []
            if view is not None and len(turn) == 1 and self.turn_shown is not None:
                self.send(turn[0], view)  # the prompt offered it: "Enter for <the move>"
            return
        if view is None:
            self.say("Refused: wait a moment, the table is moving on.", "red")
            return
        turn, optional = self.split(view)
        if text in ("?", "help"):
            self.show_moves(view, turn, optional)
            return
        if not turn and not optional:
            waited = ", ".join(seat_label(view.table, s, self.seat) for s in view.on_turn)
            self.say(f"Refused: not your turn (the table waits for {waited or 'nobody'}).", "red")
            return
        move = self.resolve(text, view)
        if move is not None:
            self.send(move, view)

    def send(self, move: str, view: croupier_pb2.TableView) -> None:
        """Submits `move`; refused ABORTED, it is sent again by the clients' rule
        (common.resend), else the refusal is shown and the turn shown afresh."""
        resends = 0
        attempts = 0
        while True:
            try:
                answer = self.stub.SubmitMove(
                    croupier_pb2.SubmitMoveRequest(
                        table_id=self.table_id, move=move, expected_version=view.version
                    ),
                    metadata=self.metadata,
                    timeout=RPC_TIMEOUT,
                )
            except grpc.RpcError as error:
                code = error.code()
                attempts += 1
                if code in RETRY_CODES and attempts < SUBMIT_ATTEMPTS:
                    # the same move at the same version: a repeat of one that went through is
                    # answered as the first was, so nothing is played twice
                    time.sleep(min(0.2 * 2**attempts, 3.0))
                    continue
                if code != grpc.StatusCode.ABORTED:
                    self.say(f"Refused: {rpc_error(error)}", "red")
                    self.turn_shown = None if code in RETRY_CODES else self.turn_shown
                    return
                fresh = self.get_view()
                if resend(move, view, fresh, resends):
                    # only another seat's optional move came in between: the move stands
                    resends += 1
                    view = fresh
                    continue
                self.say(f"Refused: {rpc_error(error)}; here is the table now.", "red")
                self.turn_shown = None
                return
            # The move's own event (in order with the others) shows it and the view after it.
            self.known = max(self.known, answer.version)
            self.turn_shown = None
            return

    def get_view(self) -> croupier_pb2.TableView:
        try:
            view = self.stub.GetView(
                croupier_pb2.GetViewRequest(table_id=self.table_id), metadata=self.metadata,
                timeout=RPC_TIMEOUT, wait_for_ready=True,
            )
        except grpc.RpcError as error:
            raise ClientError(rpc_error(error)) from None
        self.take(view)
        return view

    def ready_for_next_deal(self) -> None:
        """This seat is ready: the next deal starts once every person seated is."""
        try:
            self.stub.ReadyForNextDeal(
                croupier_pb2.ReadyForNextDealRequest(table_id=self.table_id),
                metadata=self.metadata, timeout=RPC_TIMEOUT,
            )
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.FAILED_PRECONDITION:  # else: it started already
                self.say(f"Refused: {error.details()}", "red")
            return
        self.say("Ready for the next deal.", "dim")

    def take(self, view: croupier_pb2.TableView) -> None:
        if view.version >= self.known or self.view is None:
            self.known = max(self.known, view.version)
            self.view = view

    def leave(self) -> bool:
        """Gives the seat back when the person quits mid-match, so the table is listed with
        an open seat again rather than one held by nobody. True if the server took it."""
        try:
            self.stub.LeaveTable(
                croupier_pb2.LeaveTableRequest(table_id=self.table_id), metadata=self.metadata,
                timeout=3.0,
            )
        except grpc.RpcError:
            return False
        return True

    # --- the table's events ------------------------------------------------------------

    def post(self, kind: str, item: object) -> None:
        if self.stopping.is_set():
            return
        self.inbox.put((kind, item))
        with contextlib.suppress(OSError):
            os.write(self.wake_w, b".")

    def pump(self, from_version: int) -> None:
        """The stream thread: events (and what goes wrong) into the inbox, in order."""
        try:
            for event in retrying_stream(self.stub, self.table_id, self.metadata, from_version,
                                         lambda text: self.post("say", text)):
                if self.stopping.is_set():
                    return
                self.post("event", event)
        except Exception as error:  # noqa: BLE001 - handed to the main thread to report
            self.post("failed", error)

    def on_event(self, event: croupier_pb2.TableEvent) -> bool:
        """Shows one event; True after the last (END)."""
        self.show_event(event)
        if event.kind == croupier_pb2.EVENT_KIND_END:
            if event.end_reason == croupier_pb2.END_REASON_ABANDONED:
                self.say("The table was closed as abandoned: nobody came back to it.", "bold")
            else:
                self.show_final(event.view)
            return True
        self.take(event.view)
        return False

    def run(self) -> int:
        view = self.stub.GetView(
            croupier_pb2.GetViewRequest(table_id=self.table_id), metadata=self.metadata,
            timeout=RPC_TIMEOUT,
        )
        self.take(view)
        quiet_thread(lambda: self.pump(view.version))
        try:
            while True:
                self.refresh()
                ready, _, _ = select.select([self.stdin, self.wake_r], [], [])
                if self.wake_r in ready and self.drain():
                    return 0
                if self.stdin in ready:
                    self.read_input()
        finally:
            self.stopping.set()

    def drain(self) -> bool:
        """Handles what the stream thread brought; True once the match is over."""
        with contextlib.suppress(OSError):
            os.read(self.wake_r, 4096)
        while True:
            try:
                kind, item = self.inbox.get_nowait()
            except queue.Empty:
                return False
            if kind == "event":
                assert isinstance(item, croupier_pb2.TableEvent)
                if self.on_event(item):
                    return True
            elif kind == "say":
                self.say(str(item), "dim")
            elif isinstance(item, Exception):
                raise item

    def read_input(self) -> None:
        data = os.read(self.stdin, 4096)
        if not data:
            raise Quit("end of input")
        self.typed += data.decode(errors="replace")
        while "\n" in self.typed:
            line, self.typed = self.typed.split("\n", 1)
            self.prompt_open = False  # the newline ended the prompt's line
            self.handle_line(line.strip())

    def show_event(self, event: croupier_pb2.TableEvent) -> None:
        table = event.view.table
        who = seat_label(table, event.seat, self.seat)
        if event.kind == croupier_pb2.EVENT_KIND_MOVE:
            message, renderer = game_view(event.view)
            if (event.seat == self.seat or message is None
                    or renderer.news(message, event.move)):
                self.say(f"{who}: {self.label(event.view, event.move)}",
                         "bold" if event.seat == self.seat else None)
        elif event.kind == croupier_pb2.EVENT_KIND_JOINED and event.seat != self.seat:
            self.say(f"{who} joined" + (f" as {event.name}" if event.name else ""), "dim")
        elif event.kind == croupier_pb2.EVENT_KIND_LEFT:
            self.say(f"{who} left the table", "dim")
        elif event.kind == croupier_pb2.EVENT_KIND_DEAL_STARTS:
            self.say("The next deal starts.", "bold")
        if event.deal_over:
            self.show_deal_over(event.view)
            if event.view.next_deal_at:
                left = max(0, round(event.view.next_deal_at - time.time()))
                self.say(f"The next deal starts in {left} s: press Enter to start it now "
                         "(once everyone at the table has).", "dim")

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
        deals = f" after {plural(result.deals_played, 'deal')}" if result.deals_played else ""
        self.say(f"Game over{deals}. Final scores:", "bold")
        for line in scores_lines(result, view.table, self.seat, last_deal=False):
            self.say(line)
        if result.winners:
            names = ", ".join(seat_label(view.table, w, self.seat) for w in result.winners)
            verdict = "You win!" if self.seat in result.winners else "You lose."
            self.say(f"{winners_word(result.winners)}: {names}. {verdict}",
                     "bold green" if "win" in verdict else "bold")


def play_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="croupier play",
        description="Play a game in the terminal: matched with other players by the server "
        "(bots take the seats nobody comes for), at a given table (--table), or at a table "
        "of your own against bots (--bots).",
    )
    parser.add_argument("game", nargs="?", default="",
                        help="game to play (its engine name, as the lobby lists them)")
    add_server_flags(parser)
    parser.add_argument("--name", default=os.environ.get("USER") or "player",
                        help="your name at the table, and your guest's name when one is made "
                        "(default: $USER)")
    parser.add_argument("--rated", action="store_true",
                        help="a rated match: players of close ratings, and the result updates "
                        "the ratings (default: a quick match, the first players who come)")
    parser.add_argument("--players", type=int, default=0,
                        help="number of players (default: the game's minimum)")
    parser.add_argument("--table", metavar="ID", default="",
                        help="join this table instead of being matched: your seat there if "
                        "you hold or were given one (from any device), else a free seat")
    parser.add_argument("--seat", type=int, default=None,
                        help="with --table: the seat to take (default: yours, else the first "
                        "free one)")
    parser.add_argument("--bots", default="", metavar="LEVEL",
                        help="a table of your own against bots of this level instead of being "
                        "matched: random, heuristic, easy, medium, hard or expert "
                        "(docs/levels.md); you take seat 0")
    parser.add_argument("--option", action="append", type=option_argument, default=[],
                        metavar="NAME=VALUE", help="a table option (repeatable), e.g. deals=1")
    parser.add_argument("--identity-file", metavar="PATH",
                        default=os.environ.get(TOKEN_FILE_ENV, ""),
                        help="a file holding your identity token from the frontend's identity "
                        f"provider (env {TOKEN_FILE_ENV}); without it you play as a guest "
                        "kept in your config directory (docs/players.md)")
    add_key_flags(parser, "with the 'tables' role, for --bots")
    parser.add_argument("--auto-end", action="store_true",
                        help="end your turn for you when ending it is all you may do (an "
                        "'end' move of the game). The server never does: a turn "
                        "that ended by itself would tell the table what your hand allows")
    return parser


def play_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with a combination of play's flags, or None."""
    if not args.game and not args.table:
        return "name a GAME to be matched in (or --table ID to join a table)"
    if args.table and args.bots:
        return "--table and --bots do not go together: --bots makes a table of your own"
    if args.rated and (args.table or args.bots):
        return "--rated is for matchmaking: leave out --table and --bots"
    if args.seat is not None and not args.table:
        return "--seat goes with --table"
    return None


def follow_hint(args: argparse.Namespace, table_id: str) -> str:
    """The command that watches this table from another terminal, with the flags it needs."""
    words = ["croupier", "watch", table_id]
    if args.server != DEFAULT_SERVER:
        words += ["--server", args.server]
    if args.tls_ca:
        words += ["--tls-ca", args.tls_ca]
    return " ".join(words)


def _hang_up(signum: int, frame: object) -> None:
    raise Quit(signal.Signals(signum).name)


def player_identity(console: Console, stub: croupier_pb2_grpc.CroupierStub,
                    args: argparse.Namespace, needed: bool) -> Identity | None:
    """The player this run plays as (see clients.identity_file). Without one a table of
    your own or a given table is still played with a seat token; matchmaking needs one."""
    server = parse_server(args.server).address
    try:
        identity = identity_for(stub, server, args.name, args.identity_file)
    except IdentityError as error:
        if needed or args.identity_file:
            raise ClientError(f"no player identity: {error}") from None
        console.print(Text(f"Playing without a player identity ({error}): the seat is "
                           "held by this terminal's seat token alone.", style="dim"))
        return None
    player = identity.player
    how = ("a new guest" if identity.created else "guest") if player.guest else "signed in"
    console.print(Text(f"You are {player.name} ({how}, player {player.player_id}).",
                       style="dim"))
    return identity


def find_seat(console: Console, stub: croupier_pb2_grpc.CroupierStub,
              args: argparse.Namespace) -> Seated:
    """The seat this run plays: the game is checked first (a typo is told before anything
    is made), then the player's identity is had, then the seat."""
    if args.table:
        return given_table(stub, args, player_identity(console, stub, args, needed=False))
    info = game_info(stub, args.game)
    identity = player_identity(console, stub, args, needed=not args.bots)
    if args.bots:
        return own_table(stub, args, info, identity)
    assert identity is not None
    return matched_table(console, stub, args, info, identity)


def introduce(console: Console, args: argparse.Namespace, seated: Seated) -> None:
    info = seated.info
    console.print(Text(
        f"{info.title or info.name}: table {seated.table_id}, you are seat {seated.seat}; "
        f"{seated.others}.", style="bold"))
    console.print(Text(f"Others can follow with: {follow_hint(args, seated.table_id)}",
                       style="dim"))
    if info.notation:
        console.print(Text(f"Notation: {info.notation}", style="dim"))
    typing = renderer_for(info.name).typing()
    if typing:
        console.print(Text(typing, style="dim"))
    console.print(Text("Type 'quit' (or press Ctrl-C) to leave the table.", style="dim"))


def play_main(argv: list[str] | None = None) -> int:
    """`croupier play`: 0 when the match was played to the end, 130 when the person left it
    (Ctrl-C, 'quit', the end of input, a hang-up: the seat is given back) or cancelled the
    wait for a match, 1 on an error."""
    parser = play_parser()
    args = parser.parse_args(argv)
    problem = play_problem(args)
    if problem:
        parser.error(problem)
    try:
        args.api_key = api_key_of(args)
    except ValueError as e:
        print(f"croupier play: {e}", file=sys.stderr)
        return 2
    console = Console(highlight=False)
    channel, stub = _connect(args)
    for sig in (signal.SIGTERM, signal.SIGHUP):  # a closed terminal leaves the seat too
        signal.signal(sig, _hang_up)
    try:
        with channel:
            seated = find_seat(console, stub, args)
            player = Player(console, stub, seated.table_id, seated.seat, seated.token,
                            auto_end=args.auto_end)
            try:
                introduce(console, args, seated)
                return player.run()
            except (Quit, EOFError, KeyboardInterrupt):
                given_back = player.leave()
                with contextlib.suppress(OSError):  # a hung-up terminal takes no more output
                    console.print()
                    console.print(Text("Left the game; your seat is open again." if given_back
                                       else "Left the game (the seat could not be given back).",
                                       style="dim"))
                return 130
    except Cancelled as cancelled:
        with contextlib.suppress(OSError):
            if cancelled.matched is not None:
                console.print(Text(
                    f"A match was found as you left: seat {cancelled.matched.seat} at table "
                    f"{cancelled.matched.table_id} is yours (croupier play --table "
                    f"{cancelled.matched.table_id}).", style="dim"))
            else:
                console.print(Text("Stopped looking for a match (ticket cancelled).",
                                   style="dim"))
        return 130
    except (ClientError, SeatingError, MatchError) as error:
        console.print(Text(f"Error: {error}", style="bold red"))
        return 1
    except grpc.RpcError as error:
        console.print(Text(f"Error from {args.server}: {rpc_error(error)}", style="bold red"))
        return 1
    except (Quit, EOFError, KeyboardInterrupt):
        with contextlib.suppress(OSError):
            console.print(Text("\nLeft the game.", style="dim"))
        return 130
    finally:
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)


# --- croupier watch ----------------------------------------------------------------------


def watch_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="croupier watch",
        description="Follow a table as a spectator: every event with the public view, to the end.",
    )
    parser.add_argument("table_id", metavar="TABLE_ID", help="the table to watch")
    add_server_flags(parser)
    parser.add_argument("--from-version", type=int, default=0,
                        help="show events after this version (default: from the start)")
    return parser


def describe_event(event: croupier_pb2.TableEvent) -> str:
    """One line per event: version, kind, who and what."""
    table = event.view.table
    kind = KIND_NAMES.get(event.kind, str(event.kind))
    who = seat_label(table, event.seat)
    if event.kind == croupier_pb2.EVENT_KIND_MOVE:
        message, renderer = game_view(event.view)
        body = f"{who}: {event.move if message is None else renderer.label(message, event.move)}"
    elif event.kind == croupier_pb2.EVENT_KIND_JOINED:
        body = f"{who} joined" + (f" as {event.name}" if event.name else "")
    elif event.kind == croupier_pb2.EVENT_KIND_LEFT:
        body = f"{who} left"
    elif event.kind == croupier_pb2.EVENT_KIND_CREATED:
        body = f"table {table.table_id} created ({table.game}, {table.players} players)"
    elif event.kind == croupier_pb2.EVENT_KIND_END:
        abandoned = event.end_reason == croupier_pb2.END_REASON_ABANDONED
        body = "closed as abandoned" if abandoned else "match over"
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
                # The deal's end comes before the next deal's picture: the event's view is
                # already the table after the move, i.e. the next deal dealt.
                if event.deal_over:
                    say("  Deal over:", "bold")
                    message, renderer = game_view(event.view)
                    if message is not None:
                        for line in renderer.deal_over(message, event.view.table, None):
                            say(line)
                    for line in scores_lines(event.view.result, event.view.table, None,
                                             last_deal=True):
                        say(line)
                # The full public picture when the stage changes (new deal, phase, landlord),
                # otherwise one line with what moved: hand sizes, combination to beat, bids.
                now = stage_of(event.view)
                if event.view.table.status == croupier_pb2.TABLE_STATUS_WAITING:
                    pass  # nothing dealt yet: no game picture (it read "deal 1 of 0")
                elif now != stage:
                    stage = now
                    for line in public_lines(event.view, None):
                        say(f"    {line}", "dim")
                else:
                    summary = public_summary(event.view)
                    if summary:
                        say(f"    {summary}", "dim")
                if event.kind == croupier_pb2.EVENT_KIND_END:
                    if event.end_reason == croupier_pb2.END_REASON_ABANDONED:
                        return 0
                    result = event.view.result
                    say("Final scores:", "bold")
                    for line in scores_lines(result, event.view.table, None, last_deal=False):
                        say(line)
                    if result.winners:
                        names = ", ".join(seat_label(event.view.table, w) for w in result.winners)
                        say(f"{winners_word(result.winners)}: {names}", "bold")
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
    sys.exit("usage: python -m clients.terminal {play,watch} ...")
