"""Engine states: equality over their fields, and fast copies (ISMCTS copies a state on
every `apply`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class SlotState:
    """Base of engine states (`__slots__` classes): equal when of the same class with equal
    `_FIELDS` (the part that defines the position; caches left out), hashable alike."""

    __slots__ = ()
    _FIELDS: tuple[str, ...] = ()

    def copy(self) -> Any:  # replaced per class by `install_copy`
        raise NotImplementedError

    def _key(self) -> tuple:
        return tuple(getattr(self, name) for name in self._FIELDS)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


def install_copy(cls: type, fields: Iterable[str], cleared: Iterable[str] = ()) -> None:
    """Gives `cls` a `copy()` that assigns each of `fields` in straight-line code (several
    times faster than a loop over the slots, and apply's main cost otherwise); `cleared`
    attributes (per-state caches) start as None in the copy."""
    lines = ["def copy(self):", "    new = _new(cls)"]
    lines += [f"    new.{name} = self.{name}" for name in fields]
    lines += [f"    new.{name} = None" for name in cleared]
    lines.append("    return new")
    namespace: dict[str, Any] = {"_new": object.__new__, "cls": cls}
    exec("\n".join(lines), namespace)
    cls.copy = namespace["copy"]  # type: ignore[attr-defined]
