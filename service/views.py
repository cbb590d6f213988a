"""Records and events rendered as croupier.v1 messages, each for one observer.

Only this module turns engine states into what a client sees, and it does so only through
`engine.view(state, seat)` and `engine.redact(...)`: a seat's hidden cards cannot reach anyone
else by any other path. Seat token hashes never leave the record. A table not dealt yet (no
seat has seen a card) renders an empty game view and a zero result: there is nothing to show.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from croupier.v1 import croupier_pb2 as pb
from google.protobuf import struct_pb2

from common.level_names import LEVEL_NAMES
from engines.cache import remember
from engines.contract import Game, OptionSpec, fixes_cards, public_options
from engines.registry import get_game
from service import decode_cache
from service.model import (
    RATED_OPTION,
    TIMER_OPTION,
    Event,
    EventKind,
    SeatKind,
    Status,
    TableRecord,
)

STATUS = {
    Status.WAITING: pb.TABLE_STATUS_WAITING,
    Status.PLAYING: pb.TABLE_STATUS_PLAYING,
    Status.FINISHED: pb.TABLE_STATUS_FINISHED,
    Status.ABANDONED: pb.TABLE_STATUS_ABANDONED,
}
STATUS_FROM_PB = {v: k for k, v in STATUS.items()}
SEAT_KIND = {SeatKind.HUMAN: pb.SEAT_KIND_HUMAN, SeatKind.BOT: pb.SEAT_KIND_BOT}
EVENT_KIND = {
    EventKind.CREATED: pb.EVENT_KIND_CREATED,
    EventKind.JOINED: pb.EVENT_KIND_JOINED,
    EventKind.LEFT: pb.EVENT_KIND_LEFT,
    EventKind.MOVE: pb.EVENT_KIND_MOVE,
    EventKind.END: pb.EVENT_KIND_END,
    EventKind.SEATS_OPENED: pb.EVENT_KIND_SEATS_OPENED,
    EventKind.READY: pb.EVENT_KIND_READY,
    EventKind.DEAL_STARTS: pb.EVENT_KIND_DEAL_STARTS,
}


def to_value(value: Any) -> struct_pb2.Value:
    out = struct_pb2.Value()
    if value is None:
        out.null_value = struct_pb2.NULL_VALUE
    elif isinstance(value, bool):
        out.bool_value = value
    elif isinstance(value, int | float):
        out.number_value = value
    elif isinstance(value, str):
        out.string_value = value
    else:
        out.string_value = str(value)
    return out


def option_spec(spec: OptionSpec) -> pb.OptionSpec:
    return pb.OptionSpec(
        name=spec.name, type=spec.type, default=to_value(spec.default), doc=spec.doc,
        label=spec.title, advanced=spec.advanced, aliases=spec.aliases,
    )


def game_info(game: Game) -> pb.GameInfo:
    info = game.info
    return pb.GameInfo(
        name=info.name,
        title=info.title,
        min_players=info.min_players,
        max_players=info.max_players,
        options=[option_spec(o) for o in info.options],
        notation=info.notation,
        zero_sum=info.zero_sum,
        one_deal=dict(info.one_deal),
    )


def state_of(game: Game, record: TableRecord) -> Any | None:
    """The record's engine state; None before the deal."""
    return decode_cache.decode(game, record.state) if record.dealt else None


def to_act(game: Game, record: TableRecord, state: Any | None) -> list[int]:
    """Seats that may move now: none until every seat is taken, and none in the pause between
    deals (moves are refused till then)."""
    if record.status != Status.PLAYING or state is None or record.next_deal_at:
        return []
    return sorted(game.to_act(state))


class _TableTemplates:
    """The parts of a pb.Table that change only when its seats do (id, game, options, seats),
    built once per seats tuple and copied (in C) into each message. Keyed by the identity of
    the record's seats tuple and options dict, which a table keeps from version to version
    (records are never mutated), holding both so that their ids cannot be reused."""

    def __init__(self, size: int = 1024) -> None:
        self._size = size
        self._built: dict[tuple[int, int], tuple[Any, Any, pb.Table]] = {}

    def __call__(self, record: TableRecord) -> pb.Table:
        seats, options = record.seats, record.options
        hit = self._built.get((id(seats), id(options)))
        if (
            hit is not None
            and hit[0] is seats
            and hit[1] is options
            and hit[2].table_id == record.table_id
        ):
            return hit[2]
        template = pb.Table(
            table_id=record.table_id,
            game=record.game,
            players=record.players,
            seats=[
                pb.SeatInfo(
                    seat=i,
                    kind=SEAT_KIND[s.kind],
                    # Seat.bot_level holds a bot seat's entrant: a level's, or an outside one's
                    bot_level=s.bot_level if s.bot_level in LEVEL_NAMES else "",
                    occupied=s.occupied,
                    name=s.name,
                    is_bot=s.is_bot,
                    away=s.away,
                    entrant=s.bot_level if s.kind == SeatKind.BOT else "",
                    player_id=s.player,
                )
                for i, s in enumerate(seats)
            ],
            created_at=record.created_at,
            rated=bool(options.get(RATED_OPTION)),
        )
        specs = get_game(record.game).info.options
        template.options.update(public_options(specs, options))
        template.fixed_deck = fixes_cards(specs, options)
        remember(self._built, self._size, (id(seats), id(options)), (seats, options, template))
        return template


_templates = _TableTemplates()


# each seat's presence (service.presence.Presence, numbered as pb.Presence); None: unspecified
Presences = Sequence[int] | None


def fill_table(
    out: pb.Table, record: TableRecord, acting: Iterable[int], presence: Presences = None
) -> None:
    """Writes `record` into the empty message `out` (in place: no copy of a copy)."""
    out.CopyFrom(_templates(record))
    out.status = STATUS[record.status]
    out.version = record.version
    out.to_act.extend(acting)
    if presence:
        for seat, state in zip(out.seats, presence, strict=False):
            if state:
                seat.presence = state  # type: ignore[assignment]


def table(record: TableRecord, acting: Iterable[int], presence: Presences = None) -> pb.Table:
    out = pb.Table()
    fill_table(out, record, acting, presence)
    return out


def table_summary(game: Game, record: TableRecord, presence: Presences = None) -> pb.Table:
    return table(record, to_act(game, record, state_of(game, record)), presence)


def fill_result(out: pb.Result, game: Game, state: Any | None, players: int = 0) -> None:
    """The result of `state`; before the deal (None) every one of `players` seats at 0."""
    if state is None:
        out.totals.extend([0] * players)
        out.last_deal.extend([0] * players)
        return
    r = game.result(state)
    out.totals.extend(r.totals)
    out.last_deal.extend(r.last_deal)
    out.finished = r.finished
    out.winners.extend(r.winners)
    out.deals_played = r.deals_played


def result(game: Game, state: Any) -> pb.Result:
    out = pb.Result()
    fill_result(out, game, state)
    return out


def table_view(
    game: Game,
    record: TableRecord,
    seat: int | None,
    out: pb.TableView | None = None,
    last_time: float | None = None,
    presence: Presences = None,
) -> pb.TableView:
    """`record` (or a snapshot of it at an event) as `seat` sees it; None: a spectator.
    Written into `out` when given (an empty message, such as a response's field).
    `last_time`: when the table's last event (of the snapshot) happened, which the seat's
    deadline counts from (timed tables; without it no deadline is shown)."""
    if out is None:
        out = pb.TableView()
    state = state_of(game, record)
    acting = to_act(game, record, state)
    fill_table(out.table, record, acting, presence)
    out.version = record.version
    shown = getattr(out.view, game.info.view_field)
    if state is None:  # nothing dealt: the game's view message, empty but for the seat
        shown.SetInParent()
        if "seat" in shown.DESCRIPTOR.fields_by_name:
            shown.seat = -1 if seat is None else seat
    else:
        shown.CopyFrom(game.view(state, seat))
    out.to_act.extend(acting)
    if acting:
        assert state is not None
        out.on_turn.extend(sorted(game.on_turn(state)))
    fill_result(out.result, game, state, record.players)
    fill_commitment(out.commitment, record)
    if record.paused:
        out.next_deal_at = record.next_deal_at
        out.ready_seats.extend(record.ready)
    if seat is not None:
        out.seat = seat
        if seat in acting:
            assert state is not None
            out.legal_moves.extend(game.format_move(m) for m in game.legal_moves(state, seat))
        left = record.budget_left(seat)
        if left is not None:
            out.budget_left = left
        turn = record.options.get(TIMER_OPTION) or 0
        if turn and last_time is not None and seat in out.on_turn:
            # an away seat is played for as soon as the table waits for it
            away = record.seats[seat].away
            out.deadline = last_time if away else last_time + turn + (left or 0.0)
    return out


def fill_commitment(out: pb.DealCommitment, record: TableRecord) -> None:
    """The commitment to the cards in play at `record`'s version (a snapshot's at its event),
    public fields only: its salt and cards stay on the server until the record is exported.
    Left unset before the deal."""
    for sealed in reversed(record.deals):
        if sealed.version <= record.version:
            out.index, out.deal = sealed.index, sealed.deal
            out.version, out.sha256 = sealed.version, sealed.sha256
            return


def shown_move(game: Game, event: Event, before: bytes | None, observer: int | None) -> str:
    """The event's move as `observer` may see it; needs the state before the move."""
    if event.kind != EventKind.MOVE:
        return ""
    if before is None:  # cannot happen for a well-formed log: a move never comes first
        raise ValueError(f"no state before move event {event.version}")
    return game.redact(
        decode_cache.decode(game, before), event.seat, game.parse_move(event.move), observer
    )


def table_event(
    game: Game,
    record: TableRecord,
    event: Event,
    before: bytes | None,
    observer: int | None,
    presence: Presences = None,
) -> pb.TableEvent:
    snap = record.with_(
        seats=event.seats, status=event.status, version=event.version, state=event.state,
        next_deal_at=event.next_deal_at, ready=event.ready,
    )
    return pb.TableEvent(
        version=event.version,
        kind=EVENT_KIND[event.kind],
        seat=event.seat,
        move=shown_move(game, event, before, observer),
        name=event.name,
        view=table_view(game, snap, observer, last_time=event.time, presence=presence),
        time=event.time,
        deal_over=event.deal_over,
        auto=event.auto,
        end_reason=end_reason(event),
    )


def end_reason(event: Event) -> pb.EndReason:
    if event.kind != EventKind.END:
        return pb.END_REASON_UNSPECIFIED
    return pb.END_REASON_ABANDONED if event.abandoned else pb.END_REASON_MATCH_OVER


def presence_event(
    game: Game,
    record: TableRecord,
    last: Event,
    observer: int | None,
    presence: Sequence[int],
    now: float,
) -> pb.TableEvent:
    """A change of the seats' presence, as `observer` sees the table at its last event `last`:
    no event of the log, so its version is that event's (nobody's expected_version moves)."""
    snap = record.with_(seats=last.seats, status=last.status, version=last.version,
                        state=last.state, next_deal_at=last.next_deal_at, ready=last.ready)
    return pb.TableEvent(
        version=last.version,
        kind=pb.EVENT_KIND_PRESENCE,
        seat=-1,
        view=table_view(game, snap, observer, last_time=last.time, presence=presence),
        time=now,
    )
