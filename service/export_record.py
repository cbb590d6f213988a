"""Game records of finished tables: the initial state, every move unredacted, the result.

Each move also says whether the turn timer played it (`auto`), how long after the previous
event it came (`seconds`: its mover's thinking and calls) and any `fallback` its client gave:
public facts, which tournaments count per seat; and, beside a fallback, the bot's own answer
that was refused (`rejected`), which no view or event shows while the table is played.

A record is only given out once its table is over (finished, or closed as abandoned): before
that the initial state (which holds the seed and every hand) and the canonical moves would
show hidden cards. It is built from the event log the store already keeps (each event carries
the state after it), so exporting needs no extra bookkeeping while a table is played. The
initial state is the first dealt state in the log: the event that took the last seat (older
tables: the creation's).
"""

from __future__ import annotations

from croupier.v1 import croupier_pb2 as pb

from service import decode_cache, views
from service.model import EventKind, Status
from service.reasons import Reason
from service.seats import Credential
from service.store import Store
from service.tables import Code, TableError, Tables

PAGE = 1000


async def export_record(tables: Tables, table_id: str, token: Credential = None) -> pb.GameRecord:
    """The record of a finished (or abandoned) table; FAILED_PRECONDITION while it is still
    being played. A private table's record goes only to a caller with one of its seat
    tokens."""
    record = await tables.get(table_id)
    tables.authenticate(record, token)
    if not record.status.closed:
        raise TableError(
            Code.FAILED_PRECONDITION,
            f"table {table_id} is not finished (version {record.version}); its record, which "
            "shows every hand, is only given out once the match is over (or the table was "
            "closed as abandoned)",
            reason=Reason.RECORD_NOT_READY,
        )
    game = tables.game(record.game)
    store: Store = tables.store
    out = pb.GameRecord(
        table_id=record.table_id,
        game=record.game,
        players=record.players,
        version=record.version,
        created_at=record.created_at,
        end_reason=pb.END_REASON_ABANDONED
        if record.status == Status.ABANDONED
        else pb.END_REASON_MATCH_OVER,
    )
    out.options.update(record.options)
    out.seats.extend(views.table_summary(game, record).seats)
    last = 0
    previous = record.created_at  # the time of the event before the next one
    seen_creation = False
    while True:
        events = await store.events_after(table_id, last, limit=PAGE)
        for event in events:
            if event.version != last + 1:
                raise RuntimeError(f"event log of {table_id} skips from {last} to {event.version}")
            last = event.version
            seen_creation = seen_creation or event.kind == EventKind.CREATED
            if not out.initial_state and event.state:
                out.initial_state = event.state  # the deal (moves come only after it)
            if event.kind == EventKind.MOVE:
                out.moves.add(
                    version=event.version, seat=event.seat, move=event.move,
                    deal_over=event.deal_over, auto=event.auto,
                    seconds=max(0.0, event.time - previous), fallback=event.fallback,
                    rejected=event.rejected,
                )
            elif event.kind == EventKind.END:
                out.finished_at = event.time
            previous = event.time
        if len(events) < PAGE:
            break
    if not seen_creation:
        raise RuntimeError(f"event log of {table_id} has no creation event")
    if out.initial_state:
        seed = getattr(decode_cache.decode(game, out.initial_state), "seed", "")
        out.seed = seed if isinstance(seed, str) else ""
    elif record.status != Status.ABANDONED:
        raise RuntimeError(f"event log of finished table {table_id} has no deal")
    views.fill_result(out.result, game, views.state_of(game, record), record.players)
    # the table is over: each commitment's salt and cards may now be shown
    out.commitments.extend(
        pb.DealCommitment(index=d.index, deal=d.deal, version=d.version, sha256=d.sha256,
                          salt=d.salt, cards=d.cards)
        for d in record.deals
    )
    return out
