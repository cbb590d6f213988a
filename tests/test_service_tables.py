"""Table logic in-process (memory store, real Dou Dizhu engine, a clock the test moves):
seat rules, the bot fill delay, leaving, deal and match ends; and on the SQLite store, moves
committed together and two processes on one file. The wire-level behaviour is in
test_service_api.py."""

from __future__ import annotations

import asyncio
import random
import sqlite3
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import pytest

from engines.registry import get_game
from service.model import EventKind, SeatKind, Status
from service.moves import REPLAY_WINDOW
from service.store_memory import MemoryStore
from service.store_sqlite import SQLiteStore
from service.tables import Code, SeatRequest, TableError, Tables
from tests.support import Clock, run

GAME = get_game("dou_dizhu")


def make() -> tuple[Tables, Clock]:
    clock = Clock()
    return Tables(MemoryStore(), clock=clock), clock


async def refused(code: Code, coro: Awaitable[Any]) -> str:
    with pytest.raises(TableError) as info:
        await coro
    assert info.value.code == code, info.value.message
    return info.value.message


def test_create_validates_everything_and_stores_nothing_on_error() -> None:
    async def go() -> None:
        t, _ = make()
        msg = await refused(Code.INVALID_ARGUMENT, t.create("poker", 0, {}))
        assert "dou_dizhu" in msg  # the message lists the known games
        assert "3" in await refused(Code.INVALID_ARGUMENT, t.create("dou_dizhu", 4, {}))
        assert "deals" in await refused(Code.INVALID_ARGUMENT, t.create("dou_dizhu", 3, {"deals": 0}))
        assert "unknown option" in await refused(
            Code.INVALID_ARGUMENT, t.create("dou_dizhu", 3, {"colour": "red"})
        )
        await refused(Code.INVALID_ARGUMENT, t.create("dou_dizhu", 3, {}, [SeatRequest()] * 2))
        await refused(Code.INVALID_ARGUMENT, t.create("dou_dizhu", 3, {}, (), -1.0))
        await refused(Code.RESOURCE_EXHAUSTED, t.create("dou_dizhu", 3, {"deck": "x" * 5000}))
        assert await t.list() == ([], "")
        rec = await t.create("dou_dizhu", 0, {"deals": 2})
        assert (rec.players, rec.version, rec.status) == (3, 1, Status.WAITING)
        assert rec.options == {"deals": 2}
        assert [e.kind for e in await t.store.events_after(rec.table_id, 0)] == [EventKind.CREATED]

    run(go())


def test_seat_kinds_and_the_fill_delay() -> None:
    async def go() -> None:
        t, clock = make()
        seats = [SeatRequest(), SeatRequest(SeatKind.BOT, "hard"), SeatRequest()]
        rec = await t.create("dou_dizhu", 3, {}, seats, fill_with_bots_after_seconds=30)
        tid = rec.table_id
        msg = await refused(Code.FAILED_PRECONDITION, t.join(tid, 1, "ann", bot=False))
        assert "reserved for a bot" in msg
        msg = await refused(Code.FAILED_PRECONDITION, t.join(tid, 0, "bot", bot=True))
        assert "fill delay" in msg
        assert [r.table_id for r in (await t.list(waiting_for_bot=True))[0]] == [tid]  # seat 1
        seat, token, rec = await t.join(tid, None, "bot", bot=True)
        assert seat == 1 and rec.seats[1].is_bot and rec.version == 2
        assert token and rec.seats[1].token_hash != token
        # only human seats are left, and their delay has not passed
        assert await t.list(waiting_for_bot=True) == ([], "")
        await refused(Code.FAILED_PRECONDITION, t.join(tid, None, "bot2", bot=True))
        seat, _, rec = await t.join(tid, None, "ann", bot=False)
        assert seat == 0
        await refused(Code.FAILED_PRECONDITION, t.join(tid, 0, "bob", bot=False))  # taken
        await refused(Code.INVALID_ARGUMENT, t.join(tid, 7, "bob", bot=False))
        clock.now += 31
        assert [r.table_id for r in (await t.list(waiting_for_bot=True))[0]] == [tid]
        assert await t.open_due_seats() == 1
        rec = await t.get(tid)
        assert rec.seats[2].kind == SeatKind.BOT and rec.seats[2].bot_level == "random"
        log = await t.store.events_after(tid, 0)
        assert log[-1].kind == EventKind.SEATS_OPENED and log[-1].version == rec.version
        assert await t.open_due_seats() == 0  # nothing left to hand over
        await refused(Code.FAILED_PRECONDITION, t.join(tid, 2, "carl", bot=False))
        seat, _, rec = await t.join(tid, None, "bot3", bot=True)
        assert seat == 2 and rec.status == Status.PLAYING
        await refused(Code.FAILED_PRECONDITION, t.join(tid, None, "late", bot=False))
        await refused(Code.RESOURCE_EXHAUSTED, t.join(tid, None, "x" * 65, bot=False))

    run(go())


def test_bot_may_take_a_human_seat_once_the_delay_passed_before_the_sweep() -> None:
    async def go() -> None:
        t, clock = make()
        rec = await t.create("dou_dizhu", 3, {}, fill_with_bots_after_seconds=5)
        clock.now += 6
        seat, _, rec = await t.join(rec.table_id, None, "bot", bot=True)
        assert seat == 0 and rec.seats[0].kind == SeatKind.HUMAN and rec.seats[0].is_bot

    run(go())


def test_leave_frees_the_seat_and_kills_the_token() -> None:
    async def go() -> None:
        t, _ = make()
        tid = (await t.create("dou_dizhu", 3, {})).table_id
        tokens = {}
        for name in "abc":
            seat, token, rec = await t.join(tid, None, name, bot=False)
            tokens[seat] = token
        assert rec.status == Status.PLAYING
        await refused(Code.UNAUTHENTICATED, t.leave(tid, None))
        await refused(Code.PERMISSION_DENIED, t.leave(tid, "not-a-token"))
        rec = await t.leave(tid, tokens[1])
        assert rec.status == Status.WAITING and not rec.seats[1].occupied
        await refused(Code.PERMISSION_DENIED, t.leave(tid, tokens[1]))
        acting = min(GAME.to_act(GAME.decode(rec.state)))
        msg = await refused(Code.FAILED_PRECONDITION, t.move(tid, tokens[acting] if acting != 1
                                                            else tokens[0], "pass", 0))
        assert "not started" in msg or "not your turn" in msg
        seat, tokens[1], rec = await t.join(tid, None, "d", bot=False)
        assert seat == 1 and rec.status == Status.PLAYING
        assert rec.version == 1 + 3 + 1 + 1

    run(go())


def test_moves_events_deal_over_and_end() -> None:
    async def go() -> None:
        t, _ = make()
        tid = (await t.create("dou_dizhu", 3, {"deals": 2})).table_id
        tokens = {}
        for name in "abc":
            seat, token, _ = await t.join(tid, None, name, bot=False)
            tokens[seat] = token
        rng = random.Random(7)
        rec = await t.get(tid)
        while rec.status != Status.FINISHED:
            state = GAME.decode(rec.state)
            seat = min(GAME.to_act(state))
            move = GAME.format_move(rng.choice(list(GAME.legal_moves(state, seat))))
            before = rec.version
            out = await t.move(tid, tokens[seat], move, before)
            rec = out.record
            assert out.events[0].version == before + 1 and out.events[0].move == move
        log = await t.store.events_after(tid, 0, limit=10_000)
        assert [e.version for e in log] == list(range(1, rec.version + 1))
        assert log[-1].kind == EventKind.END and log[-2].kind == EventKind.MOVE
        assert log[-2].deal_over and not log[-1].deal_over
        deal_ends = [e for e in log if e.deal_over]
        assert len(deal_ends) == 2  # one per deal (redeals after all-pass bidding don't count)
        assert GAME.result(GAME.decode(log[-1].state)).finished
        await refused(Code.FAILED_PRECONDITION, t.move(tid, tokens[0], "pass", 0))
        await refused(Code.FAILED_PRECONDITION, t.leave(tid, tokens[0]))
        await refused(Code.FAILED_PRECONDITION, t.join(tid, None, "z", bot=False))
        assert (await t.get(tid)).version == rec.version

    run(go())


# --- on the SQLite store: moves of many tables committed together, two processes ----------


async def _seated(t: Tables) -> tuple[str, dict[int, str]]:
    tid = (await t.create("dou_dizhu", 3, {})).table_id
    tokens = {}
    for name in "abc":
        seat, token, _ = await t.join(tid, None, name, bot=False)
        tokens[seat] = token
    return tid, tokens


async def _first_legal(t: Tables, tid: str) -> tuple[int, str, int]:
    rec = await t.get(tid)
    state = GAME.decode(rec.state)
    seat = min(GAME.to_act(state))
    return seat, GAME.format_move(GAME.legal_moves(state, seat)[0]), rec.version


def test_moves_of_many_tables_at_once_all_land(tmp_path: Path) -> None:
    """Moves at many tables in the same turn of the loop share one SQLite transaction; each is
    answered after it committed, and all of them are in the file."""

    async def go() -> None:
        t = Tables(SQLiteStore(tmp_path / "db.sqlite"))
        tables = [await _seated(t) for _ in range(12)]
        for _ in range(5):
            planned = [(tid, tokens, *(await _first_legal(t, tid))) for tid, tokens in tables]
            outs = await asyncio.gather(
                *(t.move(tid, tokens[seat], move, v) for tid, tokens, seat, move, v in planned)
            )
            assert [o.record.version for o in outs] == [v + 1 for *_, v in planned]
        await t.store.close()
        fresh = SQLiteStore(tmp_path / "db.sqlite")
        for tid, _ in tables:
            rec = await fresh.get(tid)
            assert rec is not None and rec.version == 4 + 5
            log = await fresh.events_after(tid, 0)
            assert [e.version for e in log] == list(range(1, 10))
            assert log[-1].state == rec.state
        await fresh.close()

    run(go())


def test_two_processes_on_one_file_a_stale_move_is_aborted(tmp_path: Path) -> None:
    """Two Tables on one file (as two server processes): each reads the other's moves at once
    despite its record cache; a move decided on a view the other made stale is refused with
    ABORTED and changes nothing, and the next read is fresh again."""

    async def go() -> None:
        a = Tables(SQLiteStore(tmp_path / "db.sqlite"))
        b = Tables(SQLiteStore(tmp_path / "db.sqlite"))
        tid, tokens = await _seated(a)
        seat, move, version = await _first_legal(b, tid)  # b caches the record
        await a.move(tid, tokens[seat], move, version)
        assert (await b.get(tid)).version == version + 1  # b sees a's move
        # both decide on the same version and move while a third connection holds the write
        # lock: each passes its checks on the record it read and queues its write; once the
        # lock is free, the compare-and-set lets exactly one of them land
        seat, move, version = await _first_legal(a, tid)
        state = GAME.decode((await a.get(tid)).state)
        other = GAME.format_move(GAME.legal_moves(state, seat)[1])  # a repeat would be a retry
        assert (await b.get(tid)).version == version
        blocker = sqlite3.connect(tmp_path / "db.sqlite", isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")
        moves = asyncio.gather(
            a.move(tid, tokens[seat], move, version),
            b.move(tid, tokens[seat], other, version),
            return_exceptions=True,
        )
        await asyncio.sleep(0.05)
        blocker.execute("ROLLBACK")
        blocker.close()
        outs = await moves
        won = [o for o in outs if not isinstance(o, BaseException)]
        lost = [o for o in outs if isinstance(o, TableError)]
        assert len(won) == 1 and len(lost) == 1 and lost[0].code == Code.ABORTED, outs
        assert "changed while this request ran" in lost[0].message
        assert (await a.get(tid)).version == (await b.get(tid)).version == version + 1
        # the loser's next read is fresh, and a move decided on it goes through
        seat, move, version = await _first_legal(b, tid)
        out = await b.move(tid, tokens[seat], move, version)
        assert out.record.version == version + 1
        assert (await a.get(tid)).version == version + 1
        log = await a.store.events_after(tid, 0)
        assert [e.version for e in log] == list(range(1, version + 2))
        for t in (a, b):
            await t.store.close()

    run(go())


def test_seat_kinds_the_rules_reserve_come_from_the_service() -> None:
    """Doppelkopf's duel seats people at 0 and 2 and computers at 1 and 3: a table gets those
    seat kinds by default, and a person at a computer's seat is refused with nothing stored."""
    H, B = SeatRequest(SeatKind.HUMAN), SeatRequest(SeatKind.BOT, "easy")

    async def go() -> None:
        t, _ = make()
        rec = await t.create("doppelkopf", 4, {"duel": True})
        assert [s.kind for s in rec.seats] == [
            SeatKind.HUMAN, SeatKind.BOT, SeatKind.HUMAN, SeatKind.BOT
        ]
        ok = await t.create("doppelkopf", 4, {"duel": True}, [H, B, H, B])
        assert ok.seats[1].bot_level == "easy"
        msg = await refused(
            Code.INVALID_ARGUMENT, t.create("doppelkopf", 4, {"duel": True}, [H, H, H, B])
        )
        assert "seat(s) 1, 3 for computers" in msg and "seat 1 must be a bot seat" in msg
        assert len((await t.list("doppelkopf", None, False, 100))[0]) == 2
        await t.create("doppelkopf", 4, {"duel": True}, [B, B, B, B])  # bots in people's parts
        # without duel any seat may be either
        await t.create("doppelkopf", 4, {}, [B, B, B, H])

    run(go())


def test_a_retried_move_is_answered_as_the_move_it_repeats(tmp_path: Path) -> None:
    """A client whose reply was lost sends the same move with the same expected version again:
    it learns its move landed (same version, move and view) and nothing is played twice; any
    other move at that version, or the same move at an earlier version, is ABORTED. A repeat
    with expected_version 0 has nothing to be recognised by: it is a new move (here refused
    with FAILED_PRECONDITION, the seat is no longer to act), as docs/api.md says."""

    async def go() -> None:
        t = Tables(SQLiteStore(tmp_path / "db.sqlite"))
        tid, tokens = await _seated(t)
        seat, move, version = await _first_legal(t, tid)
        state = GAME.decode((await t.get(tid)).state)
        other = GAME.format_move(GAME.legal_moves(state, seat)[1])
        first = await t.move(tid, tokens[seat], move, version)
        again = await t.move(tid, tokens[seat], move, version)
        assert again.replayed and not first.replayed
        assert (again.record.version, again.move, again.public, again.seat) == (
            first.record.version, first.move, first.public, first.seat)
        assert again.record.state == first.record.state
        assert again.record.seats == first.record.seats
        assert [e.version for e in await t.store.events_after(tid, 0)] == list(
            range(1, version + 2))
        for text, expected, code in (
            (other, version, Code.ABORTED),
            (move, version - 1, Code.ABORTED),
            (move, 0, Code.FAILED_PRECONDITION),  # a new move, by a seat not to act
        ):
            with pytest.raises(TableError) as err:
                await t.move(tid, tokens[seat], text, expected)
            assert err.value.code == code, (text, expected, err.value.message)
            if not expected:
                assert "not your turn" in err.value.message, err.value.message
        # the table moved on: still recognised a few moves later
        for _ in range(3):
            s, m, v = await _first_legal(t, tid)
            await t.move(tid, tokens[s], m, v)
        assert (await t.move(tid, tokens[seat], move, version)).record.version == version + 1
        await t.store.close()

    run(go())


def test_a_retry_is_refused_once_the_seat_changed_hands_or_too_long_after(tmp_path: Path) -> None:
    async def go() -> None:
        t = Tables(SQLiteStore(tmp_path / "db.sqlite"))
        tid, tokens = await _seated(t)
        seat, move, version = await _first_legal(t, tid)
        await t.move(tid, tokens[seat], move, version)
        await t.leave(tid, tokens[seat])
        again, token, _ = await t.join(tid, seat, "someone else", bot=False)
        assert again == seat
        with pytest.raises(TableError) as err:
            await t.move(tid, token, move, version)
        assert err.value.code == Code.ABORTED  # the new occupant did not make that move

        tid, tokens = await _seated(t)
        seat, move, version = await _first_legal(t, tid)
        await t.move(tid, tokens[seat], move, version)
        while (await t.get(tid)).version <= version + REPLAY_WINDOW:
            s, m, v = await _first_legal(t, tid)
            await t.move(tid, tokens[s], m, v)
        with pytest.raises(TableError) as err:
            await t.move(tid, tokens[seat], move, version)
        assert err.value.code == Code.ABORTED, err.value.message  # too late to be recognised
        await t.store.close()

    run(go())


def test_a_retried_last_move_is_answered_with_the_end_of_the_match(tmp_path: Path) -> None:
    async def go() -> None:
        t = Tables(SQLiteStore(tmp_path / "db.sqlite"))
        tid, tokens = await _seated(t)
        while True:
            seat, move, version = await _first_legal(t, tid)
            out = await t.move(tid, tokens[seat], move, version)
            if out.record.status == Status.FINISHED:
                break
        assert [e.kind for e in out.events] == [EventKind.MOVE, EventKind.END]
        again = await t.move(tid, tokens[seat], move, version)
        assert again.replayed and again.record.version == out.record.version == version + 2
        assert again.record.status == Status.FINISHED
        assert [e.kind for e in again.events] == [EventKind.MOVE, EventKind.END]
        await t.store.close()

    run(go())
