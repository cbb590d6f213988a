"""Terminal layouts of each game's view, for `croupier play` and `croupier watch`.

A game gets a dedicated layout by adding `clients/render/<view_field>.py` with a module-level
`RENDERER` (a `Renderer` subclass); games without one are shown by the generic dump, so a new
engine is playable in the terminal the moment it is registered.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import Any, Generic, TypeVar

from croupier.v1 import croupier_pb2
from google.protobuf import text_format
from google.protobuf.message import Message


def seat_label(table: croupier_pb2.Table, seat: int, me: int | None = None) -> str:
    """'seat 2 (bot)', 'seat 1 (Ann)' or 'seat 0 (you)': who is who at a glance."""
    if seat < 0:
        return "table"
    if seat == me:
        return f"seat {seat} (you)"
    info = next((s for s in table.seats if s.seat == seat), None)
    if info is None:
        return f"seat {seat}"
    if info.is_bot or (info.kind == croupier_pb2.SEAT_KIND_BOT and not info.occupied):
        return f"seat {seat} (bot)"
    return f"seat {seat} ({info.name})" if info.name else f"seat {seat}"


def signed(n: int) -> str:
    return f"{n:+d}"


def plural(n: int, word: str, words: str = "") -> str:
    """'1 card', '3 cards', '2 tricks': a count with its noun agreeing."""
    return f"{n} {word if n == 1 else (words or word + 's')}"


def generic_lines(message: Message) -> list[str]:
    """A readable dump of any game's view message, for games without a dedicated layout."""
    lines = []
    for fd, value in message.ListFields():
        items = list(value) if fd.is_repeated else [value]
        if fd.message_type is not None:
            text = "; ".join(text_format.MessageToString(v, as_one_line=True) for v in items)
        else:
            text = " ".join(str(v) for v in items)
        lines.append(f"{fd.name.replace('_', ' ')}: {text}")
    return lines


V = TypeVar("V", bound=Message)


class Renderer(Generic[V]):
    """How one game's view reads in a terminal. The defaults dump the message generically."""

    # Whether a bare number may be a move of the game (a card's value played alone): then a
    # typed number is always notation, and list entries are picked with '#N' only. Games
    # without such moves set it False, so a bare number picks from the list as '#N' does.
    numbers_are_moves = True

    def public(self, view: V, table: croupier_pb2.Table, me: int | None) -> list[str]:
        """What every seat knows: deal, phase, scores, cards left..."""
        return generic_lines(view)

    def stage(self, view: V) -> tuple[object, ...]:
        """What changes rarely (deal, phase): `watch` prints the public lines when it does."""
        return (type(view).__name__,)

    def summary(self, view: V, table: croupier_pb2.Table) -> str:
        """One line of what changes move by move, for spectators."""
        return "; ".join(generic_lines(view))

    def turn(
        self, view: V, table: croupier_pb2.Table, me: int
    ) -> list[tuple[str, str | None]]:
        """Lines (text, rich style) shown above the legal moves on the player's turn."""
        return []

    def deal_over(self, view: V, table: croupier_pb2.Table, me: int | None) -> list[str]:
        """Lines about the deal just finished, before its scores."""
        return []

    def label(self, view: V, move: str) -> str:
        """A move as the screen shows it: cards written as the hand writes them. Typing the
        label or the notation plays the move alike."""
        return move

    def typed(self, text: str) -> str:
        """What the person typed, in the game's notation (suit symbols back to letters)."""
        return text

    def order(self, view: V, moves: list[str]) -> list[str]:
        """The legal moves in the order the list shows them (cards as the hand holds them)."""
        return moves

    def optional(self, view: V, moves: list[str]) -> list[str]:
        """Among the moves of the seat whose turn it is, those it may make but need not
        (announcements, calls): offered beside the list, never asked for. The moves of a seat
        the table does not wait for are all optional, whatever this says."""
        return []

    def news(self, view: V, move: str) -> bool:
        """Whether another seat's `move` is worth a line for the player: False for moves that
        change nothing on the screen (a declined announcement, say), which would
        otherwise print like a move and ask for the player's move again each time."""
        return True

    def typing(self) -> str:
        """A line on how moves may be typed, where the screen writes them otherwise than the
        notation does (suits as symbols); "" where it does not."""
        return ""

    def auto_end(self, view: V, turn: list[str]) -> str | None:
        """The move a player's opt-in auto-end plays for him when ending the turn is all that
        is left of `turn` (his moves as listed), else None. The client decides from the moves
        it was given: the engine never ends a turn by itself where that would tell the table
        what the hand allows."""
        return None

    def also(self, view: V, table: croupier_pb2.Table, me: int, moves: list[str]) -> str:
        """The line offering the optional moves, which may be typed at any time."""
        shown = ", ".join(self.label(view, m) for m in moves)
        return f"Also: {shown} — type {'it' if len(moves) == 1 else 'any of them'} any time."


GENERIC: Renderer[Any] = Renderer()


@cache
def renderer_for(view_field: str) -> Renderer[Any]:
    """The game's layout, or the generic one."""
    try:
        module = importlib.import_module(f"{__name__}.{view_field}")
    except ModuleNotFoundError:
        return GENERIC
    return getattr(module, "RENDERER", GENERIC)
