"""The matcher: groups waiting tickets into tables, in every server, every fraction of a second.

A queue holds the tickets of one wish (game, players, options, mode). Quick: the oldest first,
`seats for people` at a time. Rated: by the players' conservative ratings on the players'
ladder; a group forms when its spread fits the window of its oldest ticket, which widens with
the wait (`window_base + window_growth x seconds waited`). After the game's bot wait the
oldest ticket gets a table anyway, with whoever waits (up to the table) and bots of the
built-in level whose rating is closest to the waiting players' for the other seats.

A group is seated in two steps: the table is created first (its seats reserved for the
tickets' players), then the tickets are claimed atomically (`TicketStore.claim`). A claim
that loses (another replica, a cancel, an expiry came first) leaves a table nobody will join:
it is closed at once. A replica killed between the two steps loses no ticket either: the
tickets are still waiting and another replica groups them; its table, with nobody at it, is
closed by the abandonment round. Queue leases spare replicas work they would lose; the claim
alone keeps every ticket seated at most once.
"""

from __future__ import annotations

import asyncio
import bisect
import json
import math
import random
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from prometheus_client import Counter, Gauge, Histogram

from common.level_names import LEVEL_NAMES
from common.logging import get_logger
from service import ratings
from service.model import BOT_PLAYER_PREFIX, PLAYERS_LADDER, EventKind, SeatKind, Status
from service.store import StoreUnavailable
from service.tables import SeatRequest, TableError, Tables
from service.tickets import KEEP_FINISHED_SECONDS, Mode, Ticket, TicketStore, queue_labels
from service.validation import game_options

log = get_logger("croupier.matchmaking")

# ratings read from the store are reused this long (every FindMatch of a game needs them)
RATINGS_FRESH_SECONDS = 2.0
# levels never rated stand at these conservative ratings: weakest first, a step apart, so a
# newcomer (0: never rated) meets "easy" (see docs/players.md, Matchmaking)
LEVEL_PRIOR_FIRST = -10.0
LEVEL_PRIOR_STEP = 5.0
# how often finished tickets are purged (seconds)
PURGE_EVERY = 60.0

WAITING = Gauge(
    "croupier_match_waiting_tickets",
    "Tickets waiting for a match, by game and mode (as the last matcher round saw them; "
    "shared by all replicas of one store)",
    ["game", "mode"],
    multiprocess_mode="max",
)
TIME_TO_MATCH = Histogram(
    "croupier_match_seconds",
    "Seconds from a ticket's opening to its table, by game and mode",
    ["game", "mode"],
    buckets=(0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300),
)
MATCHED = Counter(
    "croupier_match_tickets", "Tickets matched, by game, mode and whether bots filled seats",
    ["game", "mode", "bots"],
)


def level_prior(level: str) -> float:
    """The conservative rating a built-in level stands at until it is rated."""
    return LEVEL_PRIOR_FIRST + LEVEL_PRIOR_STEP * LEVEL_NAMES.index(level)


def parse_bots_after(text: str) -> tuple[float, dict[str, float]]:
    """--match-bots-after: "SECONDS" and/or "GAME=SECONDS" entries, comma-separated (the
    last plain one is the default); ValueError saying what is wrong."""
    default, per_game = 20.0, {}
    for entry in (e.strip() for e in text.split(",")):
        if not entry:
            continue
        game, _, raw = entry.rpartition("=")
        try:
            seconds = float(raw)
        except ValueError:
            raise ValueError(f"--match-bots-after takes SECONDS or GAME=SECONDS, got "
                             f"{entry[:40]!r}") from None
        if not math.isfinite(seconds) or seconds < 0:
            raise ValueError(f"--match-bots-after needs 0 or more seconds, got {entry[:40]!r}")
        if game:
            per_game[game.strip()] = seconds
        else:
            default = seconds
    return default, per_game


@dataclass(frozen=True)
class MatchSettings:
    """The matcher's settings (flags --match-*, env CROUPIER_MATCH_*)."""

    bots_after: float = 20.0  # seconds before bots fill a queue's oldest ticket's table
    bots_after_games: Mapping[str, float] = field(default_factory=dict)  # per game
    ticket_seconds: float = 60.0  # a ticket nobody asks about this long expires
    window_base: float = 5.0  # rated: the rating spread a group may have at once
    window_growth: float = 0.5  # rated: and its widening per second waited
    interval: float = 0.25  # seconds between rounds
    turn_seconds: float = 60.0  # the turn timer of matched tables (unless the wish sets one)

    def __post_init__(self) -> None:
        for name in ("bots_after", "ticket_seconds", "window_base", "window_growth",
                     "interval", "turn_seconds"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0 or (name == "interval" and value == 0):
                raise ValueError(f"matchmaking setting {name} must be a positive number, "
                                 f"got {value!r}")

    def bots_wait(self, game: str) -> float:
        return self.bots_after_games.get(game, self.bots_after)

    def window(self, ticket: Ticket, now: float) -> float:
        return self.window_base + self.window_growth * max(0.0, now - ticket.created_at)


@dataclass(frozen=True)
class Group:
    tickets: tuple[Ticket, ...]
    bots: bool  # seats beyond the tickets get bots


def form_groups(waiting: Sequence[Ticket], size: int, now: float, settings: MatchSettings,
                bots_after: float) -> list[Group]:
    """The tables a queue's waiting (alive) tickets make now; pure, so every replica would
    form the same from the same tickets."""
    if size <= 0 or not waiting:
        return []
    by_age = sorted(waiting, key=lambda t: (t.created_at, t.ticket_id))
    groups: list[Group] = []
    taken: set[str] = set()
    rated = by_age[0].mode == Mode.RATED
    if not rated:
        while len(by_age) - len(taken) >= size:
            group = tuple(t for t in by_age if t.ticket_id not in taken)[:size]
            taken.update(t.ticket_id for t in group)
            groups.append(Group(group, False))
    else:
        ladder = sorted(by_age, key=lambda t: (t.rating, t.created_at, t.ticket_id))
        keys = [(t.rating, t.created_at, t.ticket_id) for t in ladder]
        for anchor in by_age:
            if anchor.ticket_id in taken or len(ladder) < size:
                continue
            at = bisect.bisect_left(keys, (anchor.rating, anchor.created_at, anchor.ticket_id))
            window = settings.window(anchor, now)
            best: tuple[float, int] | None = None
            for start in range(max(0, at - size + 1), min(at, len(ladder) - size) + 1):
                spread = ladder[start + size - 1].rating - ladder[start].rating
                if spread <= window and (best is None or spread < best[0]):
                    best = (spread, start)
            if best is None:
                continue
            group = tuple(ladder[best[1]:best[1] + size])
            del ladder[best[1]:best[1] + size]
            del keys[best[1]:best[1] + size]
            taken.update(t.ticket_id for t in group)
            groups.append(Group(group, False))
    # bots for the oldest tickets that waited long enough, with the closest of the others
    left = [t for t in by_age if t.ticket_id not in taken]
    while left and now - left[0].created_at >= bots_after:
        anchor, others = left[0], left[1:]
        if rated:  # the closest within the anchor's window
            window = settings.window(anchor, now)
            others = sorted((t for t in others if abs(t.rating - anchor.rating) <= window),
                            key=lambda t: (abs(t.rating - anchor.rating), t.created_at))
        group = (anchor, *others[:size - 1])
        chosen = {t.ticket_id for t in group}
        left = [t for t in left if t.ticket_id not in chosen]
        groups.append(Group(group, len(group) < size))
    return groups


def closest_level(target: float, level_ratings: Mapping[str, float]) -> str:
    """The built-in level whose rating is closest to `target` (the weaker on a tie)."""
    return min(LEVEL_NAMES, key=lambda lv: (abs(level_ratings[lv] - target),
                                            LEVEL_NAMES.index(lv)))


class Matchmaker:
    """Groups the tickets of one ticket store into tables of one `Tables`."""

    def __init__(self, tables: Tables, tickets: TicketStore, settings: MatchSettings,
                 clock: Callable[[], float] = time.time) -> None:
        self.tables = tables
        self.tickets = tickets
        self.settings = settings
        self.clock = clock
        self.owner = secrets.token_hex(6)  # this replica, for queue leases
        self._ratings: dict[str, tuple[float, dict[str, float]]] = {}
        self._purged = 0.0
        self._seen_queues: set[tuple[str, str]] = set()

    # --- ratings ------------------------------------------------------------------------
    async def _game_ratings(self, game: str) -> dict[str, float]:
        now = time.monotonic()
        cached = self._ratings.get(game)
        if cached is not None and now - cached[0] < RATINGS_FRESH_SECONDS:
            return cached[1]
        found = {r.entrant: ratings.ordinal(r.mu, r.sigma)
                 for r in await self.tables.store.ratings(PLAYERS_LADDER, game)}
        self._ratings[game] = (now, found)
        return found

    async def rating(self, game: str, player_id: str) -> float:
        """The player's conservative rating in the game (0 when never rated: the model's
        default, mu - 3 sigma)."""
        return (await self._game_ratings(game)).get(player_id, 0.0)

    async def level_ratings(self, game: str) -> dict[str, float]:
        known = await self._game_ratings(game)
        return {lv: known.get(f"{BOT_PLAYER_PREFIX}{lv}", level_prior(lv)) for lv in LEVEL_NAMES}

    # --- seats --------------------------------------------------------------------------
    def people_seats(self, ticket: Ticket) -> list[int]:
        """The seats of the wish's table that people may take (the game may keep some for
        computers)."""
        game = self.tables.game(ticket.game)
        options = game_options(json.loads(ticket.options))
        kinds = game.seat_kinds(ticket.players, options)
        if kinds is None:
            return list(range(ticket.players))
        return [i for i, kind in enumerate(kinds) if kind != "bot"]

    def bots_at(self, ticket: Ticket) -> float:
        return ticket.created_at + self.settings.bots_wait(ticket.game)

    # --- rounds -------------------------------------------------------------------------
    async def round(self) -> int:
        """One look at every queue; how many tickets it matched."""
        now = self.clock()
        matched = 0
        counts: dict[tuple[str, str], int] = {}
        for queue in await self.tickets.queues():
            key = queue_labels(queue)
            if not await self.tickets.lease(queue, self.owner, 4 * self.settings.interval + 1,
                                            now):
                # another replica groups it: only counted here (the gauge is per replica)
                counts[key] = counts.get(key, 0) + await self.tickets.count(queue)
                continue
            waiting = await self.tickets.waiting(queue)
            counts[key] = counts.get(key, 0) + len(waiting)
            matched += await self._queue_round(waiting, now)
        for key in self._seen_queues - counts.keys():
            WAITING.labels(*key).set(0)
        for key, n in counts.items():
            WAITING.labels(*key).set(n)
        self._seen_queues |= counts.keys()
        if now - self._purged > PURGE_EVERY:
            self._purged = now
            await self.tickets.purge(now - KEEP_FINISHED_SECONDS)
        return matched

    async def _queue_round(self, waiting: list[Ticket], now: float) -> int:
        dead = [t.ticket_id for t in waiting if not t.alive(now)]
        if dead:
            await self.tickets.expire(dead, now)
        alive = [t for t in waiting if t.alive(now)]
        if not alive:
            return 0
        seats = self.people_seats(alive[0])
        groups = form_groups(alive, len(seats), now, self.settings,
                             self.settings.bots_wait(alive[0].game))
        matched = 0
        for group in groups:
            if await self.seat(group, seats, now):
                matched += len(group.tickets)
        return matched

    async def seat(self, group: Group, people_seats: Sequence[int], now: float) -> bool:
        """Creates the group's table, then claims its tickets; False (the table closed) when
        the claim lost."""
        first = group.tickets[0]
        places = random.sample(list(people_seats), len(group.tickets))
        target = sum(t.rating for t in group.tickets) / len(group.tickets)
        level = closest_level(target, await self.level_ratings(first.game))
        requests: list[SeatRequest] = []
        player_ids = [""] * first.players
        for ticket, place in zip(group.tickets, places, strict=True):
            player_ids[place] = ticket.player_id
        for i in range(first.players):
            kind = SeatKind.HUMAN if player_ids[i] else SeatKind.BOT
            requests.append(SeatRequest(kind, level if kind == SeatKind.BOT else ""))
        try:
            record = await self.tables.create(
                first.game, first.players, json.loads(first.options), requests,
                player_ids=player_ids, rated=first.mode == Mode.RATED,
            )
        except TableError as e:  # the wish was checked when the tickets opened
            log.warning("match_table_refused", game=first.game, error=e.log_message)
            return False
        ids = [t.ticket_id for t in group.tickets]
        if not await self.tickets.claim(ids, record.table_id, places, self.clock()):
            await self.discard(record.table_id)
            return False
        done = self.clock()
        bots = "yes" if first.players > len(group.tickets) and group.bots else "no"
        for ticket in group.tickets:
            TIME_TO_MATCH.labels(ticket.game, ticket.mode).observe(done - ticket.created_at)
        MATCHED.labels(first.game, first.mode, bots).inc(len(group.tickets))
        log.info("match_made", table=record.table_id, game=first.game, mode=first.mode,
                 tickets=len(ids), bot_level=level if bots == "yes" else "")
        return True

    async def discard(self, table_id: str) -> None:
        """Closes a table whose claim lost, before anyone (a bot) takes a seat there."""
        tables = self.tables
        async with tables.lock(table_id):
            record = await tables.store.get(table_id)
            if record is None or record.status.closed:
                return
            new = record.with_(status=Status.ABANDONED, version=record.version + 1)
            event = tables._event(new, EventKind.END, -1, "", self.clock(), abandoned=True)
            try:
                await tables._commit(record, new, [event])
            except TableError:
                return  # somebody moved first: the abandonment round closes it later


async def run_matchmaker(matchmaker: Matchmaker) -> None:
    """The matcher's loop, one round every `settings.interval` seconds (every replica runs
    it; the claims decide)."""
    try:
        await _rounds(matchmaker)
    finally:  # cancelled as the server stops: the ticket store goes with it
        await matchmaker.tickets.close()


async def _rounds(matchmaker: Matchmaker) -> None:
    store_down = False
    while True:
        try:
            await matchmaker.round()
            if store_down:
                log.info("matchmaking_resumed")
                store_down = False
        except StoreUnavailable as exc:
            if not store_down:
                log.warning("matchmaking_paused_store_unreachable", error=str(exc))
                store_down = True
        except Exception as exc:  # keep going even if one round fails
            log.error("matchmaking_failed", error=type(exc).__name__)
        await asyncio.sleep(matchmaker.settings.interval)
