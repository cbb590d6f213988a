"""When a table no person has sat at or come back to is closed as abandoned, and how often a
person's presence is written: the settings the tables' clock (service.clock) closes tables by."""

from __future__ import annotations

import math
from dataclasses import dataclass

from service.model import (
    Status,
)

# longest a person's presence waits before it is written again (shorter for short limits)
PRESENCE_EVERY = 30.0


@dataclass(frozen=True)
class AbandonPolicy:
    """When a table no person has sat at or come back to is closed as abandoned: a waiting
    table after `waiting_seconds`, a playing one after `playing_seconds` (0: never)."""

    waiting_seconds: float = 300.0
    playing_seconds: float = 1800.0

    def __post_init__(self) -> None:
        for name in ("waiting_seconds", "playing_seconds"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise ValueError(
                    f"the time before a table is closed as abandoned ({name}) must be 0 "
                    f"(never) or a positive number of seconds, got {value!r}"
                )

    @property
    def presence_every(self) -> float:
        """How stale a table's last-seen time may get while a person is there: well inside
        the shortest limit, so presence never lags into a closing."""
        limits = [s / 5 for s in (self.waiting_seconds, self.playing_seconds) if s > 0]
        return min([PRESENCE_EVERY, *limits])

    def limit(self, status: Status) -> float:
        if status == Status.WAITING:
            return self.waiting_seconds
        if status == Status.PLAYING:
            return self.playing_seconds
        return 0.0
