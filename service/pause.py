"""The pause between deals, its rules as functions of a table record: whom it waits for,
when it ends, what a move in it is told (the jobs that use them: service.moves, .pacing)."""

from __future__ import annotations

import math

from service.model import TableRecord
from service.reasons import Reason
from service.table_errors import Code, TableError

# pauses one round ends at most (the next round takes the rest)
PAUSE_BATCH = 500


def people(record: TableRecord) -> list[int]:
    """The seats held by a person (taken, not by a bot): those the pause waits for."""
    return [i for i, s in enumerate(record.seats) if s.occupied and not s.is_bot]


def pause_until(record: TableRecord, now: float, seconds: float) -> float:
    """When the next deal may be played after a deal ended at `now`: 0 (no pause) at tables
    no person sits at (bots and tournaments play on at once) or without a pause set."""
    if seconds <= 0 or not people(record):
        return 0.0
    return now + seconds


def paused_refusal(record: TableRecord, now: float) -> TableError:
    """What a move in the pause is told: when it may be played."""
    left = math.ceil(record.next_deal_at - now)
    when = f"in {left} s" if left > 0 else "in a moment"
    return TableError(
        Code.FAILED_PRECONDITION,
        f"the next deal starts {when}: wait for the DEAL_STARTS event (or say "
        "ReadyForNextDeal: once every person seated is ready it starts at once)",
        "move during the pause between deals",
        reason=Reason.DEAL_PAUSE, meta={"seconds": max(left, 0)},
    )
