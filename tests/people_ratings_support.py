"""Helpers for the players' ladder tests: rated tables written straight into a store (as rated
matchmaking makes them: every seat taken, people's seats reserved for their players, bots'
for their levels), played at random, and the ratings OpenSkill gives their results.

A rated table is written into the store the server serves (its SQLite file) from the test
process, which is how the tests make one without a client being able to: CreateTable refuses
the option `rated`. The server then serves it like any other table.
"""

from __future__ import annotations

import random
import secrets
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce

from engines.registry import get_game
from service import decode_cache
from service.model import (
    RATED_OPTION,
    Event,
    EventKind,
    Seat,
    SeatKind,
    Status,
    TableRecord,
)
from service.seats import hash_token
from service.store import Store
from service.tables import Tables

GAME = "dou_dizhu"
ONE_DEAL = {"deals": 1}


@dataclass(frozen=True)
class Person:
    player_id: str
    name: str


@dataclass(frozen=True)
class Bot:
    level: str
    filled: bool = False  # a person's seat a bot worker took (the table's fill level)


def person(name: str) -> Person:
    """A guest-like player of a fresh id (no other test shares it)."""
    return Person(f"guest:{uuid.uuid4().hex[:16]}", name)


async def write_table(store: Store, seats: Sequence[Person | Bot], rated: bool = True,
                      game_name: str = GAME, options: Mapping[str, object] = ONE_DEAL,
                      ) -> tuple[str, dict[int, str]]:
    """A dealt, playing table with every seat taken; its id and the seats' tokens."""
    game = get_game(game_name)
    tokens = {i: secrets.token_urlsafe(24) for i in range(len(seats))}
    now = time.time()
    fill = next((s.level for s in seats if isinstance(s, Bot) and s.filled), "")
    made = []
    for i, s in enumerate(seats):
        digest = hash_token(tokens[i])
        if isinstance(s, Person):
            made.append(Seat(occupied=True, name=s.name, token_hash=digest, joined_at=now,
                             player=s.player_id, reserved=True))
        elif s.filled:
            made.append(Seat(occupied=True, name=f"{s.level} bot", is_bot=True,
                             token_hash=digest, joined_at=now))
        else:
            made.append(Seat(kind=SeatKind.BOT, bot_level=s.level, occupied=True,
                             name=f"{s.level} bot", is_bot=True, token_hash=digest,
                             joined_at=now))
    state = game.new_game(len(seats), dict(options), secrets.token_hex(16))
    record = TableRecord(
        table_id=secrets.token_hex(8), game=game_name, players=len(seats),
        options={**options, **({RATED_OPTION: True} if rated else {})}, seats=tuple(made),
        status=Status.PLAYING, version=1, state=game.encode(state), created_at=now,
        fill_with_bots_after_seconds=1.0 if fill else 0.0, fill_level=fill, seen_at=now,
    )
    created = Event(record.table_id, 1, EventKind.CREATED, -1, "", "", now, record.state,
                    record.seats, record.status)
    await store.create(record, [created])
    return record.table_id, tokens


async def play_in_process(tables: Tables, table_id: str, tokens: Mapping[int, str],
                          rng: random.Random) -> None:
    """Plays the table to its end through `tables` (random legal moves), not a server."""
    while True:
        record = await tables.get(table_id)
        if record.status != Status.PLAYING:
            return
        game = tables.game(record.game)
        state = decode_cache.decode(game, record.state)
        seat = sorted(game.to_act(state))[0]
        move = rng.choice(list(game.legal_moves(state, seat)))
        await tables.move(table_id, tokens[seat], game.format_move(move), record.version)


def expected_ratings(entrants: Sequence[str], totals: Sequence[int],
                     before: Mapping[str, tuple[float, float]]) -> dict[str, tuple[float, float]]:
    """What one Plackett-Luce update gives entrants (one seat each) ranked by their totals
    (equal totals share a place), computed here apart from the server's code."""
    model = PlackettLuce()
    teams = [[model.rating(mu=before[e][0], sigma=before[e][1]) if e in before
              else model.rating()] for e in entrants]
    ranks = [1.0 + sum(1 for q in totals if q > p) for p in totals]
    after = model.rate(teams, ranks=ranks)
    return {e: (t[0].mu, t[0].sigma) for e, t in zip(entrants, after, strict=True)}
