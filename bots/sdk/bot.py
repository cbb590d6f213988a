"""What a bot author writes: a `Bot` subclass, told about its seats through `SeatContext`.

A bot sees exactly what the server sends its seat (the TableView, the legal moves in the
server's canonical notation) and nothing of the connection: the seat token stays inside the
runner, so a bot, its hooks and whatever programs it starts can never leak or misuse it.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable
from dataclasses import dataclass

from croupier.v1 import croupier_pb2


@dataclass(frozen=True)
class SeatContext:
    """The public facts of one seat the runner plays for a bot."""

    table_id: str
    seat: int
    game: str
    entrant: str  # the entrant the seat is reserved for (a built-in level's seat: the level)
    players: int


class Bot:
    """Subclass and override `choose`. `run` given the class makes one instance per seat (and
    closes it when that seat is done); given an object, that one instance serves every seat
    (closed when the runner stops).

    Hooks run on the runner's event loop: keep them quick. An exception in a hook is logged
    (its type and where, never its message) and otherwise ignored.
    """

    # True: choose() runs in a thread, so a long search keeps every seat's stream flowing
    # (one blocking decision at a time per process unless the runner is given more threads).
    # False: called on the event loop, no thread hop (trivial bots).
    blocking: bool = True

    def choose(
        self, view: croupier_pb2.TableView, legal_moves: list[str], time_left: float
    ) -> str | Awaitable[str]:
        """One of `legal_moves`. `time_left`: seconds until the server's deadline for this seat
        minus the runner's safety margin (math.inf when the table has no timer); an answer
        later than that is dropped and the default move played instead. A bot that is not
        blocking may be asyncio-native: `async def choose` is awaited on the loop. Raising
        `sdk.Fallback(reason)` has the default played with that reason."""
        return self.default_move(view, legal_moves)

    def on_seat(self, seat: SeatContext) -> None:
        """The runner took this seat for the bot."""

    def on_event(self, seat: SeatContext, event: croupier_pb2.TableEvent) -> None:
        """An event of the seat's table, as the seat sees it (in order, END included)."""

    def on_match_end(self, seat: SeatContext, view: croupier_pb2.TableView) -> None:
        """The seat's match is over; `view.result` holds the scores."""

    def on_leave(self, seat: SeatContext) -> None:
        """The runner plays this seat no more: after on_match_end, or the seat was lost or
        given back (the runner stopping). For cleaning up per-seat resources."""

    def default_move(self, view: croupier_pb2.TableView, legal_moves: list[str]) -> str:
        """What the runner plays when the bot's answer is bad or late: a random legal move."""
        return random.choice(legal_moves)

    async def close(self) -> None:
        """The bot will be asked nothing more (end the programs it started, ...)."""
