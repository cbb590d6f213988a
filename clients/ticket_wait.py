"""Waiting for a match in a terminal: a matchmaking ticket followed until it becomes a seat.

`croupier play GAME` opens a ticket (FindMatch) and follows it with WatchTicket on a thread
of its own (signals blocked there, so Ctrl-C reaches the main thread); the main thread
shows the time waited and the players found once a second, on one line rewritten in place
on a terminal. Ctrl-C cancels the ticket (CancelTicket) before the command exits. If the
stream breaks (a restarting server), GetTicket is asked once a second instead: that also
keeps the ticket alive.
"""

from __future__ import annotations

import contextlib
import queue
import signal
import threading
import time
from collections.abc import Callable

import grpc
from croupier.v1 import croupier_pb2, croupier_pb2_grpc
from rich.console import Console

RPC_TIMEOUT = 15.0
TICK = 1.0  # seconds between two refreshes of the waiting line
MODE_WORDS = {croupier_pb2.MATCH_MODE_RATED: "rated", croupier_pb2.MATCH_MODE_QUICK: "quick"}


class MatchError(Exception):
    """The ticket ended without a seat (cancelled elsewhere, expired) or the server refused."""


class Cancelled(Exception):
    """The person cancelled the wait; `matched` is the ticket if it was matched anyway."""

    def __init__(self, matched: croupier_pb2.Ticket | None = None) -> None:
        super().__init__("cancelled")
        self.matched = matched


def _threaded(target: Callable[[], None]) -> threading.Thread:
    """A daemon thread with Ctrl-C and the quitting signals blocked (they go to the main
    thread, which does the cancelling)."""
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


def waiting_line(ticket: croupier_pb2.Ticket, seen_at: float, now: float,
                 title: str = "") -> str:
    """'Waiting for a quick match: 12 s, 1 of 3 players found; bots in 18 s.' The waited
    time runs on from the ticket's last news; the players found are the server's count."""
    waited = ticket.waited_seconds + max(0.0, now - seen_at)
    mode = MODE_WORDS.get(ticket.mode, "quick")
    line = (f"Waiting for a {mode} match of {title or ticket.game}: {waited:.0f} s, "
            f"{ticket.players_found} of {ticket.players} players found")
    if ticket.bots_at > 0:
        left = ticket.bots_at - time.time()
        line += f"; bots fill the empty seats in {left:.0f} s" if left >= 1 else \
            "; bots are taking the empty seats"
    if ticket.mode == croupier_pb2.MATCH_MODE_RATED and ticket.rating:
        line += f" (your rating {ticket.rating:.1f})"
    return line + "."


class TicketWait:
    """One ticket followed to its end; `run` answers the matched ticket."""

    def __init__(self, console: Console, stub: croupier_pb2_grpc.CroupierStub,
                 metadata: tuple[tuple[str, str], ...], title: str = "") -> None:
        self.console = console
        self.title = title  # the game's, as people read it
        self.stub = stub
        self.metadata = metadata
        self.news: queue.Queue[croupier_pb2.Ticket | Exception] = queue.Queue()
        self.stream: grpc.Future | None = None  # the WatchTicket call, to cancel it
        self.shown = ""  # the waiting line on screen ("" once ended by a newline)
        self.last_printed = 0.0

    def show(self, line: str) -> None:
        """The waiting line: rewritten in place on a terminal, else printed when it changes
        in more than the seconds (or every 10 s)."""
        out = self.console.file
        if self.console.is_terminal:
            out.write("\r" + line + "\x1b[K")
            out.flush()
            self.shown = line
            return
        now = time.monotonic()
        words = line.split(":", 1)[0] + line.split(",", 1)[-1]
        if words != self.shown or now - self.last_printed >= 10:
            out.write(line + "\n")
            out.flush()
            self.shown, self.last_printed = words, now

    def end_line(self) -> None:
        if self.shown and self.console.is_terminal:
            self.console.file.write("\n")
            self.console.file.flush()
        self.shown = ""

    def watch(self, ticket_id: str) -> None:
        """The stream thread: every news of the ticket (or the stream's failure) queued."""
        call = self.stub.WatchTicket(croupier_pb2.GetTicketRequest(ticket_id=ticket_id),
                                     metadata=self.metadata)
        self.stream = call
        try:
            for ticket in call:
                self.news.put(ticket)
        except grpc.RpcError as e:
            self.news.put(e)
            return
        self.news.put(MatchError("the server closed the ticket's stream"))

    def run(self, request: croupier_pb2.FindMatchRequest) -> croupier_pb2.Ticket:
        ticket = self.stub.FindMatch(request, metadata=self.metadata, timeout=RPC_TIMEOUT)
        try:
            return self.follow(ticket)
        except KeyboardInterrupt:
            self.end_line()
            raise Cancelled(self.cancel(ticket.ticket_id)) from None
        except MatchError:
            raise
        except BaseException:  # a hang-up, or the server failing: the ticket is given up too
            self.cancel(ticket.ticket_id)
            raise
        finally:
            if self.stream is not None:
                self.stream.cancel()
            self.end_line()

    def follow(self, ticket: croupier_pb2.Ticket) -> croupier_pb2.Ticket:
        seen_at = time.monotonic()
        streaming = True
        _threaded(lambda: self.watch(ticket.ticket_id))
        while True:
            if ticket.status == croupier_pb2.TICKET_STATUS_MATCHED:
                return ticket
            if ticket.status in (croupier_pb2.TICKET_STATUS_CANCELLED,
                                 croupier_pb2.TICKET_STATUS_EXPIRED):
                what = ("cancelled" if ticket.status == croupier_pb2.TICKET_STATUS_CANCELLED
                        else "expired")
                raise MatchError(f"the ticket was {what} before a match was found")
            self.show(waiting_line(ticket, seen_at, time.monotonic(), self.title))
            try:
                if streaming:
                    item = self.news.get(timeout=TICK)
                else:
                    time.sleep(TICK)
                    item = self.stub.GetTicket(
                        croupier_pb2.GetTicketRequest(ticket_id=ticket.ticket_id),
                        metadata=self.metadata, timeout=RPC_TIMEOUT)
            except queue.Empty:
                continue
            except grpc.RpcError as e:
                if e.code() not in (grpc.StatusCode.UNAVAILABLE,
                                    grpc.StatusCode.DEADLINE_EXCEEDED):
                    raise
                continue  # the server is away: ask again at the next tick
            if isinstance(item, grpc.RpcError):
                if item.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED,
                                       grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN,
                                       grpc.StatusCode.DEADLINE_EXCEEDED):
                    raise item
                streaming = False  # follow it by asking instead
                continue
            if isinstance(item, Exception):
                if ticket.status == croupier_pb2.TICKET_STATUS_WAITING:
                    streaming = False
                    continue
                raise item
            ticket, seen_at = item, time.monotonic()

    def cancel(self, ticket_id: str) -> croupier_pb2.Ticket | None:
        """Cancels the ticket; the ticket if it was matched before the cancel landed."""
        request = croupier_pb2.GetTicketRequest(ticket_id=ticket_id)
        try:
            self.stub.CancelTicket(request, metadata=self.metadata, timeout=3.0)
            return None
        except grpc.RpcError as e:
            if e.code() != grpc.StatusCode.FAILED_PRECONDITION:
                return None
        with contextlib.suppress(grpc.RpcError):
            ticket = self.stub.GetTicket(request, metadata=self.metadata, timeout=3.0)
            if ticket.status == croupier_pb2.TICKET_STATUS_MATCHED:
                return ticket
        return None
