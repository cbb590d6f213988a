"""Think time: at a table where a person sits, a bot answers at a human pace (a random time in a
range, shorter when it has one legal move only), so that the person can follow the play; at
tables of bots alone (tournaments, benchmarks) it answers as soon as it has decided.

The wait is an asyncio sleep taken after the decision, counting the decision's own time, and
never past the seat's turn deadline: it holds no lock and no search slot, so one worker keeps
all its other tables going meanwhile."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from croupier.v1 import croupier_pb2

# seconds a bot takes at a table with a person: a move of its own choosing, a forced one
DEFAULT_THINK = (0.8, 2.0)
DEFAULT_FORCED_THINK = (0.3, 0.6)
DEADLINE_MARGIN = 0.5  # seconds before the turn deadline by which the paced move is sent


def parse_range(text: str) -> tuple[float, float]:
    """ "MIN-MAX" or "SECONDS" (both ends the same; "0": no wait) as a (low, high) pair."""
    parts = text.strip().split("-") if text.strip() else ["0"]
    if len(parts) > 2:
        raise ValueError(f"a think time is SECONDS or MIN-MAX, got {text!r}")
    try:
        low, high = float(parts[0]), float(parts[-1])
    except ValueError:
        raise ValueError(f"a think time is SECONDS or MIN-MAX, got {text!r}") from None
    if not (0 <= low <= high) or high > 60:
        raise ValueError(f"a think time needs 0 <= MIN <= MAX <= 60 seconds, got {text!r}")
    return low, high


def format_range(pair: tuple[float, float]) -> str:
    low, high = pair
    return f"{low:g}" if low == high else f"{low:g}-{high:g}"


def person_seated(view: croupier_pb2.TableView) -> bool:
    """Whether a person holds a seat at the view's table (a taken seat not held by a bot)."""
    return any(s.occupied and not s.is_bot for s in view.table.seats)


@dataclass(frozen=True)
class Pace:
    """How long a bot takes over a move at a table with a person; (0, 0): no wait."""

    think: tuple[float, float] = (0.0, 0.0)
    forced: tuple[float, float] = (0.0, 0.0)

    @property
    def off(self) -> bool:
        return self.think[1] <= 0 and self.forced[1] <= 0

    def wait(self, view: croupier_pb2.TableView, thought: float, rng: random.Random,
             now: float | None = None) -> float:
        """Seconds to wait before sending the move decided on `view` after `thought` s: none
        at a table of bots alone, else the rest of a drawn think time, cut short before the
        seat's turn deadline."""
        if self.off or not person_seated(view):
            return 0.0
        low, high = self.forced if len(view.legal_moves) <= 1 else self.think
        left = rng.uniform(low, high) - thought
        if view.deadline:
            now = time.time() if now is None else now
            left = min(left, view.deadline - now - DEADLINE_MARGIN)
        return max(0.0, left)
