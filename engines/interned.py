"""The base of the engines' interned moves: one object per distinct move.

Legal-move lists are tuples of shared objects, so equality and hashing can be identity (the
fast built-ins) as long as every way of getting a move returns the one object: building it
from notation, copying it and unpickling it all go through the engine's interning table.
A subclass declares its fields in `__slots__` and sets `_interned` (notation -> move, filled
by the engine's own constructor) and `_parse` (notation -> move, raising ValueError).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Self


class InternedMove:
    """A move known by its notation: `Move("text")` is the parse call and its repr."""

    __slots__ = ()

    _interned: ClassVar[dict[str, Any]]
    _parse: ClassVar[Callable[[str], Any]]
    text: str

    def __new__(cls, text: str) -> Self:
        move = cls._interned.get(text)
        return move if move is not None else cls._parse(text)

    def __reduce__(self) -> tuple[type, tuple[str]]:
        return (type(self), (self.text,))

    def __copy__(self) -> Self:
        return self

    def __deepcopy__(self, memo: dict) -> Self:
        return self

    def __repr__(self) -> str:
        return f"Move({self.text!r})"

    def __str__(self) -> str:
        return self.text
