"""Asking a bot for a move: on the loop or in a thread, within the seat's deadline, and what
the runner plays in its place when the answer is bad.

A blocking bot's thread cannot be killed: past the deadline (minus the margin) the runner
plays the default move itself and drops the answer when it comes; the thread keeps its
decision slot until it returns, so a runaway search never runs beside the next one. Failures
are logged by their type and where they happened, never by their message or the view: both
may quote the seat's cards.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import math
import random
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Any

import structlog
from croupier.v1 import croupier_pb2

from bots.sdk.bot import Bot

MARGIN = 0.3  # seconds before the server's deadline by which the runner has moved
MAX_ANSWER = 1000  # characters: a longer answer is no move of any game, it is not sent
MAX_REJECTED = 200  # characters of a refused answer the record keeps (the server's bound)
CRASHED, GARBAGE, ILLEGAL, LATE = "crashed", "garbage", "illegal", "late"
REASONS = (CRASHED, GARBAGE, ILLEGAL, LATE)


class Fallback(Exception):
    """Raised by `choose` when the bot knows it has no move to give and why: the runner plays
    the default move with `reason` as the fallback (a bridge whose program answered garbage,
    too late, or died). Any other exception counts as `crashed`. `rejected`: the answer that
    was no good (garbage, illegal), which the record keeps beside the fallback."""

    def __init__(self, reason: str, detail: str = "", rejected: str = "") -> None:
        if reason not in REASONS:
            raise ValueError(f"fallback reason {reason!r} is not one of {', '.join(REASONS)}")
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail
        self.rejected = rejected


@dataclass(frozen=True)
class Answer:
    """A move to submit: the bot's own (`fallback` "") or one played in its place."""

    move: str
    fallback: str = ""
    listed: bool = True  # among the view's legal moves (else sent as given, replaced if refused)
    thought: float = 0.0  # seconds the bot was given
    rejected: str = ""  # with a fallback: the bot's answer it stands in for (`for_record`)


def for_record(answer: str) -> str:
    """A refused answer as SubmitMove's `rejected` takes it: control characters replaced by
    U+FFFD, cut to MAX_REJECTED characters (the last one an ellipsis when cut)."""
    text = "".join(c if c.isprintable() else "\ufffd" for c in answer[: MAX_REJECTED + 1])
    return text if len(text) <= MAX_REJECTED else text[: MAX_REJECTED - 1] + "…"


def _shown(answer: object) -> str:
    """What the record shows of an answer that is no string: its repr (a bot's own object
    whose repr fails: its type)."""
    try:
        return repr(answer)
    except Exception:  # noqa: BLE001 - the bot's __repr__ is the bot's
        return f"<{type(answer).__name__}>"


def where(error: BaseException, depth: int = 6) -> list[str]:
    """The innermost frames of `error`'s traceback: file, line and function only."""
    frames = traceback.extract_tb(error.__traceback__)
    return [f"{f.filename}:{f.lineno} in {f.name}" for f in frames[-depth:]]


def time_left(deadline: float, margin: float) -> float:
    """Seconds until `deadline` (unix time; 0: none) minus `margin`, at least 0."""
    if not deadline:
        return math.inf
    return max(0.0, deadline - margin - time.time())


class Asker:
    """Asks one seat's bot, and answers the move to play with the reason for a stand-in."""

    def __init__(self, bot: Bot, slot: asyncio.Semaphore, margin: float,
                 log: Any, rng: random.Random) -> None:
        self.bot = bot
        self.slot = slot  # shared by the blocking decisions of a process
        self.margin = margin
        self.log: structlog.stdlib.BoundLogger = log
        self.rng = rng

    async def ask(self, view: croupier_pb2.TableView) -> Answer:
        legal = list(view.legal_moves)
        deadline = view.deadline
        started = time.perf_counter()
        if deadline and time_left(deadline, self.margin) <= 0:
            return self._late(view, legal, 0.0)  # already too late to ask
        try:
            if self.bot.blocking:
                limit = time_left(deadline, self.margin)
                try:
                    ok, answer = await asyncio.wait_for(
                        self._in_thread(view, legal), None if math.isinf(limit) else limit
                    )
                except TimeoutError:
                    return self._late(view, legal, time.perf_counter() - started)
            else:
                limit = time_left(deadline, self.margin)
                answer = self.bot.choose(view, legal, limit)
                if inspect.isawaitable(answer):
                    # an asyncio-native bot (the bridge): awaited on the loop, within the limit
                    try:
                        answer = await asyncio.wait_for(
                            answer, None if math.isinf(limit) else limit
                        )
                    except TimeoutError:
                        return self._late(view, legal, time.perf_counter() - started)
                ok = True
        except Fallback as fell:
            # the bot itself says its answer is bad, and why (a bridge's program misbehaved)
            self.fell_back(fell.reason, source="bot")
            rejected = for_record(fell.rejected) if fell.reason in (GARBAGE, ILLEGAL) else ""
            return self.default(view, fell.reason, time.perf_counter() - started, rejected)
        except Exception as error:  # noqa: BLE001 - whatever the bot does, the seat moves
            ok, answer = False, error
        thought = time.perf_counter() - started
        if not ok:
            self.log.error("decision_failed", error=type(answer).__name__, where=where(answer),
                           fallback=CRASHED)
            return self.default(view, CRASHED, thought)
        if deadline and time.time() > deadline - self.margin:
            return self._late(view, legal, thought)
        if isinstance(answer, str):
            if answer in legal:
                return Answer(answer, thought=thought)
            move = answer.strip()
            if move in legal:
                return Answer(move, thought=thought)
            if move and len(move) <= MAX_ANSWER:
                # perhaps another spelling of a legal move: the server decides (bots.sdk.seat
                # replaces it with the default if the server refuses it)
                return Answer(move, listed=False, thought=thought)
            if move:
                self.fell_back(ILLEGAL, answer_type="str", length=len(move))
                return self.default(view, ILLEGAL, thought, for_record(move))
        self.fell_back(GARBAGE, answer_type=type(answer).__name__)
        return self.default(view, GARBAGE, thought, for_record(_shown(answer)))

    def default(self, view: croupier_pb2.TableView, fallback: str, thought: float = 0.0,
                rejected: str = "") -> Answer:
        """The bot's default move (a legal move at random if that fails too)."""
        legal = list(view.legal_moves)
        move: Any = None
        try:
            move = self.bot.default_move(view, list(legal))
        except Exception as error:  # noqa: BLE001
            self.log.error("default_move_failed", error=type(error).__name__, where=where(error))
        if not isinstance(move, str) or move not in legal:
            move = self.rng.choice(legal)
        return Answer(move, fallback, thought=thought, rejected=rejected)

    def _late(self, view: croupier_pb2.TableView, legal: list[str], thought: float) -> Answer:
        self.fell_back(LATE, waited_ms=round(thought * 1000, 3))
        return self.default(view, LATE, thought)

    def fell_back(self, reason: str, **fields: Any) -> None:
        # the reason and the answer's type or size only: an answer may name the seat's cards
        self.log.warning("decision_fallback", fallback=reason, **fields)

    async def _in_thread(self, view: croupier_pb2.TableView,
                         legal: list[str]) -> tuple[bool, Any]:
        """(True, answer) or (False, the exception), from a daemon thread of its own: a
        thread that never returns then holds no pool's worker and no process exit."""
        await self.slot.acquire()
        loop = asyncio.get_running_loop()
        done: asyncio.Future[tuple[bool, Any]] = loop.create_future()
        left = time_left(view.deadline, self.margin)

        def settle(outcome: tuple[bool, Any]) -> None:
            self.slot.release()
            if not done.done():  # else: dropped, the runner already played for it
                done.set_result(outcome)

        def work() -> None:
            try:
                outcome: tuple[bool, Any] = (True, self.bot.choose(view, legal, left))
            except BaseException as error:  # noqa: BLE001 - reported on the loop
                outcome = (False, error)
            with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits
                loop.call_soon_threadsafe(settle, outcome)

        try:
            threading.Thread(target=work, name="bot-decision", daemon=True).start()
        except BaseException:
            self.slot.release()
            raise
        return await done
