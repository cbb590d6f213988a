"""Game records of finished tables: the initial state, every move unredacted, the result.

A record is only given out once its table is finished: before that the initial state (which
holds the seed and every hand) and the canonical moves would show hidden cards. It is built
from the event log the store already keeps (each event carries the state after it), so
exporting needs no extra bookkeeping while a table is played.
"""

from __future__ import annotations

from croupier.v1 import croupier_pb2 as pb

from service import states, views
from service.store import EventKind, Status, Store
from service.tables import Code, TableError, Tables

PAGE = 1000


async def export_record(tables: Tables, table_id: str, token: str | None = None) -> pb.GameRecord:
    """The record of a finished table; FAILED_PRECONDITION while it is still being played. A
    private table's record goes only to a caller with one of its seat tokens."""
    record = await tables.get(table_id)
    tables.authenticate(record, token)
    if record.status != Status.FINISHED:
        raise TableError(
            Code.FAILED_PRECONDITION,
            f"table {table_id} is not finished (version {record.version}); its record, which "
            "shows every hand, is only given out once the match is over",
        )
    game = tables.game(record.game)
    store: Store = tables.store
    out = pb.GameRecord(
        table_id=record.table_id,
        game=record.game,
        players=record.players,
        version=record.version,
        created_at=record.created_at,
    )
    out.options.update(record.options)
    out.seats.extend(views.table_summary(game, record).seats)
    last = 0
    while True:
        events = await store.events_after(table_id, last, limit=PAGE)
        for event in events:
            if event.version != last + 1:
                raise RuntimeError(f"event log of {table_id} skips from {last} to {event.version}")
            last = event.version
            if event.kind == EventKind.CREATED:
                out.initial_state = event.state
            elif event.kind == EventKind.MOVE:
                out.moves.add(
                    version=event.version, seat=event.seat, move=event.move,
                    deal_over=event.deal_over,
                )
            elif event.kind == EventKind.END:
                out.finished_at = event.time
        if len(events) < PAGE:
            break
    if not out.initial_state:
        raise RuntimeError(f"event log of {table_id} has no creation event")
    seed = getattr(states.decode(game, out.initial_state), "seed", "")
    out.seed = seed if isinstance(seed, str) else ""
    views.fill_result(out.result, game, states.decode(game, record.state))
    return out
