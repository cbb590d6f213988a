"""Progress bars of the long bot commands (`croupier arena`, `croupier tournament`).

Each says what it counts ("games", "tables") and labels its times ("elapsed", "ETA"). They
count the smallest piece of work that finishes on its own (one table, one game), not a deal
played over every seating: a deal of a tournament is done only when its last seating is, so
counting deals kept the bar at 0 with no ETA for most of a short run. A detail field carries
what moves in between (the moves seen so far).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text


class RemainingColumn(ProgressColumn):
    """The time left at this run's pace so far: the time elapsed per piece done since the
    start (the task's `before` field: pieces done, by an earlier run). Rich's own column
    needs two pieces done in its last 30 s, which a slow game's tables rarely give."""

    def render(self, task: Task) -> Text:
        done = task.completed - task.fields.get("before", 0)
        if done <= 0 or not task.elapsed or task.total is None:
            return Text("-:--:--", style="progress.remaining")
        left = task.elapsed * max(task.total - task.completed, 0) / done
        return Text(str(timedelta(seconds=round(left))), style="progress.remaining")


def progress_bar(
    unit: str, console: Console, disable: bool = False,
    clock: Callable[[], float] | None = None,
) -> Progress:
    """'NAME ━━━━ 3/12 tables · 418 moves elapsed 0:00:41 ETA 0:02:03'. Tasks carry a
    `detail` field (text after the count, '' for none) and a `before` field (pieces already
    done when the run began, not counted in its pace)."""
    columns = (
        TextColumn("{task.description}"), BarColumn(bar_width=24), MofNCompleteColumn(), TextColumn(unit),
        TextColumn("{task.fields[detail]}"),
        TextColumn("elapsed"), TimeElapsedColumn(), TextColumn("ETA"), RemainingColumn(),
    )
    return Progress(*columns, console=console, disable=disable, get_time=clock)
