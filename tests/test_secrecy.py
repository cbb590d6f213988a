"""Secrecy: no seat (or spectator) ever learns another seat's hidden cards.

Engines: over thousands of random states of every registered game, hidden cards are moved
between the places an observer cannot see (other seats' hands, the draw pile, the stock, cards
set aside) and the observer's view must not change: a view that depends on where the hidden
cards lie leaks them. `redact` may only show cards the observer's views show. Then through a
real server: every streamed event, every error message and every server log line is checked
for other seats' cards and for tokens.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator

import grpc
import pytest
from croupier.v1 import croupier_pb2 as pb
from google.protobuf.message import Message

from bots.tournament.schedule import deal_options
from engines.contract import Game
from engines.registry import GAMES
from tests.engine_kit import SETUPS, play_random
from tests.secrecy_support import (
    _WORD,
    DOU_DIZHU_RANKS,
    SECRETS,
    Secrets,
    _split_text,
    card_tokens,
    leaked,
    view_cards,
)
from tests.support import (
    Client,
    ServerProcess,
    bearer,
    log_lines,
    stored_event_states,
    stored_table,
)


def test_every_game_has_its_secrets_named() -> None:
    assert set(SECRETS) >= set(GAMES), "name the hidden places of every new game here"


def hidden_places(msg: Message, sec: Secrets, observer: int | None) -> list[tuple[str, int]]:
    """(field, index) of every place `observer` cannot see; index -1 for a shared field."""
    places = [(f, -1) for f in sec.shared]
    for field in sec.per_seat:
        places += [(field, s) for s in range(len(getattr(msg, field))) if s != observer]
    return places


def _get(msg: Message, field: str, index: int) -> str:
    return getattr(msg, field) if index < 0 else getattr(msg, field)[index]


def _set(msg: Message, field: str, index: int, value: str) -> None:
    if index < 0:
        setattr(msg, field, value)
    else:
        getattr(msg, field)[index] = value


def swapped(game: Game, sec: Secrets, data: bytes, observer: int | None,
            rng: random.Random) -> Iterator[object]:
    """States that differ from `data` only in where two hidden cards lie (for `observer`)."""
    base = sec.state.FromString(data)
    places = [p for p in hidden_places(base, sec, observer) if sec.split(_get(base, *p))]
    if len(places) < 2:
        return
    for _ in range(3):
        (fa, ia), (fb, ib) = rng.sample(places, 2)
        msg = sec.state.FromString(data)
        a, b = sec.split(_get(msg, fa, ia)), sec.split(_get(msg, fb, ib))
        i, j = rng.randrange(len(a)), rng.randrange(len(b))
        if a[i] == b[j]:
            continue
        x, y = a[i], b[j]
        a[i], b[j] = y, x
        _set(msg, fa, ia, sec.join(a))
        _set(msg, fb, ib, sec.join(b))
        if sec.mirrored:  # the dealt hands hold the unplayed cards too
            if ia < 0 or ib < 0 or fa != fb:
                continue
            mirror = getattr(msg, sec.mirrored)
            da, db = sec.split(mirror[ia]), sec.split(mirror[ib])
            if x not in da or y not in db:
                continue
            da[da.index(x)], db[db.index(y)] = y, x
            mirror[ia], mirror[ib] = sec.join(da), sec.join(db)
        try:
            yield game.decode(msg.SerializeToString())
        except ValueError:
            continue  # the engine refuses the edited state; another swap may pass


@pytest.mark.parametrize("name", sorted(GAMES))
def test_views_do_not_depend_on_where_hidden_cards_lie(name: str) -> None:
    game, sec = GAMES[name], SECRETS[name]
    rng = random.Random(name)
    checked = 0
    for k, setup in enumerate(SETUPS[name]):
        players = setup.players
        observers = [None, *range(players)]

        def step(state: object, seat: int, move: object, observers=observers) -> None:
            nonlocal checked
            if rng.random() > 0.3:
                return
            data = game.encode(state)
            for observer in observers:
                view = game.view(state, observer)
                for other in swapped(game, sec, data, observer, rng):
                    assert game.view(other, observer) == view, (
                        f"{name}: seat {observer}'s view changes with another seat's hidden "
                        f"cards (state {data.hex()})"
                    )
                    checked += 1
                # redact: other seats learn no more of the move than a spectator, and it
                # names only cards their views show or that just left the hidden places
                # (a move that ends a deal is skipped: the next deal's hands hold its cards)
                after = game.apply(state, seat, move)
                if observer != seat and game.deal_number(after) == game.deal_number(state):
                    shown = game.redact(state, seat, move, observer)
                    assert shown == game.redact(state, seat, move, None)
                    allowed = (
                        view_cards(sec, view)
                        | view_cards(sec, game.view(after, observer))
                        | (_cards(sec, data, observer) - _cards(sec, game.encode(after), observer))
                    )
                    tokens = Counter(_split_text(sec, shown))
                    known = _cards(sec, data, None)
                    assert all(tokens[t] <= allowed[t] for t in tokens if t in known), (
                        f"{name}: {shown!r} shows seat {observer} cards that stay hidden"
                    )

        for g in range(4 if players <= 4 else 2):
            play_random(game, setup, f"secrecy{k}/{g}", random.Random(f"{k}/{g}"), step)
    assert checked >= 1000, f"only {checked} swapped states checked for {name}"


def _cards(sec: Secrets, data: bytes, observer: int | None) -> Counter[str]:
    """The cards in every place `observer` cannot see (a spectator: every hand and pile)."""
    msg = sec.state.FromString(data)
    places = hidden_places(msg, sec, observer)
    return Counter(c for p in places for c in sec.split(_get(msg, *p)))


# --- card names in free text (error messages, log lines) ------------------------------
# numbers that count or name something other than a card: seats, versions, bids, sizes,
# Dobro's values ("J+8 makes 16, less than the value in play 20: play 20 or more")


def test_a_leaking_message_is_caught() -> None:
    """The check of error messages below finds other seats' cards as words of each game's
    notation, and lets through what the reader may know (its own cards, seat numbers...)."""
    hidden = {
        "dou_dizhu": "3 4 5 6 6 6 7 8 8 9 T J J K K 2 B",
        "dobro": "3 4 6 6 9 S 10",
        "doppelkopf": "Qc Ad Td Kd 9d",
        "dos": "b4 b10 y5 w2 r#",
        "sobe_e_desce": "5c Qd 5s",
    }
    own = {"dou_dizhu": "3 4 5 7 T Q", "dobro": "4 5 7", "doppelkopf": "Th Qs", "dos": "g5 r3",
           "sobe_e_desce": "Qc Jc"}
    assert set(hidden) == set(GAMES)
    for name, text in hidden.items():
        cards, mine = Counter(text.split()), Counter(own[name].split())
        joined = text.replace(" ", "") if name == "dou_dizhu" else text.replace(" ", ", ")
        for leak in (f"seat 1 holds {text}", f"illegal: seat 2's hand: {joined}",
                     f"you may not: seat 0 holds {text.split()[-1]}"):
            assert leaked(name, leak, mine, cards), (name, leak)
        # the reader's own cards, seat numbers, versions and bids are no leak
        shown = own[name].replace(" ", "") if name == "dou_dizhu" else own[name]
        fine = (f"illegal move {shown!r}: not your turn: seat 2 is to act, version 12; "
                f"bid 1, 2 or 3; seat(s) 1, 2 to act")
        assert not leaked(name, fine, mine, cards), (name, fine)


# --- through a real server -------------------------------------------------------------
@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    proc = ServerProcess(db=tmp_path_factory.mktemp("secrecy") / "croupier.db").start()
    yield proc
    proc.stop()


@pytest.mark.e2e
@pytest.mark.parametrize("name", sorted(GAMES))
def test_streams_errors_and_logs_keep_secrets(server: ServerProcess, name: str) -> None:
    game = GAMES[name]
    setup = SETUPS[name][0]
    client = Client(server.address)
    rng = random.Random(name)
    try:
        table = client.create(game=name, players=setup.players)
        tid = table.table_id
        for seat in range(table.players):
            client.join(tid, name=f"p{seat}", seat=seat)
        tokens = dict(client.tokens)
        sec = SECRETS[name]
        # refused moves: (asker, version, what it sent, the error's details)
        refusals: list[tuple[int, int, str, str]] = []

        def refused(asker: int, version: int, text: str, expected: int = 0) -> None:
            try:
                client.move(tid, asker, text, expected)
            except grpc.RpcError as e:
                refusals.append((asker, version, text, e.details()))
                return
            raise AssertionError(f"{name}: seat {asker}'s move {text!r} was accepted")

        moves = 0
        while moves < 80:
            public = client.view(tid)
            if not public.to_act:
                break
            seat = public.to_act[0]
            mine = client.view(tid, seat)
            version, data = stored_table(server.db, tid)
            assert version == mine.version
            # wrong seats: the refusal goes to who asked and says nothing secret
            for other in range(table.players):
                if other != seat and other not in public.to_act:
                    refused(other, version, rng.choice(mine.legal_moves))
            # the seat to act, with moves the rules forbid: cards it does not hold (other
            # seats', the pile's), its own cards where they may not go
            for text in _forbidden_moves(name, game, data, seat, list(mine.legal_moves), rng):
                refused(seat, version, text, mine.version)
            client.move(tid, seat, rng.choice(mine.legal_moves), mine.version)
            moves += 1
        version = client.view(tid).version
        # events before the last seat was taken carry no state: nothing was dealt
        decoded = {v: game.decode(b) for v, b in stored_event_states(server.db, tid).items()
                   if b}
        seen: dict[int | None, dict[int, pb.TableEvent]] = {}
        for observer in [None, *range(table.players)]:
            md = bearer(tokens[observer]) if observer is not None else None
            stream = client.stub.StreamTable(
                pb.StreamTableRequest(table_id=tid, from_version=0), metadata=md, timeout=30)
            seen[observer] = {}
            for event in stream:
                seen[observer][event.version] = event
                if event.version >= version:
                    stream.cancel()
                    break
        field = game.info.view_field
        # a seat's holder sees its seat's view from its own joining on, the public one before
        joined = {e.seat: v for v, e in seen[None].items() if e.kind == pb.EVENT_KIND_JOINED}
        for holder, events in seen.items():
            assert sorted(events) == list(range(1, version + 1))
            for v, event in events.items():
                observer = holder if holder is None or v >= joined[holder] else None
                want = game.view(decoded[v], observer) if v in decoded else undealt_view(
                    name, observer)
                assert getattr(event.view.view, field) == want, (
                    f"{name}: event {v} to seat {holder} is not the view it may see")
                if event.kind == pb.EVENT_KIND_MOVE:
                    move = game.parse_move(seen[event.seat][v].move)  # the mover sees it all
                    want = game.redact(decoded[v - 1], event.seat, move, observer)
                    assert event.move == (seen[event.seat][v].move
                                          if observer == event.seat else want)
                assert all(t not in str(event) for t in tokens.values())
        # error messages went to the seat that erred; they name no card hidden from it but
        # those it named itself
        assert refusals, f"{name}: no move was refused"
        named = 0
        for asker, v, text, message in refusals:
            assert all(t not in message for t in tokens.values())
            try:
                game.parse_move(text)
            except ValueError as e:  # malformed: told what the text alone says, whatever it
                assert message == f"malformed move {text!r}: {e}", message  # names (examples)
                continue
            hidden = _cards(sec, game.encode(decoded[v]), asker)
            sent = card_tokens(name, text)
            named += any(t in hidden for t in sent)
            allowed = view_cards(sec, game.view(decoded[v], asker)) + sent
            assert not leaked(name, message, allowed, hidden, text), (
                f"{name}: seat {asker} sent {text!r} and was told {message!r}")
        assert named >= 10, f"{name}: only {named} refused moves named cards hidden from the seat"
        # the log shows each move as a spectator saw it, and no token
        log = server.db.with_suffix(".log").read_text()
        assert all(t not in log for t in tokens.values()), "a seat token in the server log"
        logged = [line["move"] for line in log_lines(log)
                  if line.get("table") == tid and line.get("method") == "SubmitMove"
                  and line.get("code") == "OK"]
        spectated = [e.move for _, e in sorted(seen[None].items())
                     if e.kind == pb.EVENT_KIND_MOVE]
        assert logged == spectated
        # refusals are logged by their kind, naming no card
        failed = [line["error"] for line in log_lines(log)
                  if line.get("table") == tid and line.get("method") == "SubmitMove"
                  and line.get("code") != "OK"]
        assert len(failed) == len(refusals)
        deck = set(_cards(sec, game.encode(decoded[min(decoded)]), None))
        assert not [e for e in failed if set(card_tokens(name, e)) & deck], failed
    finally:
        client.close()


def undealt_view(name: str, observer: int | None) -> Message:
    """What a view of a table not dealt yet holds: the game's view message, empty but for
    the seat."""
    view = getattr(pb.GameView(), GAMES[name].info.view_field)
    view.seat = -1 if observer is None else observer
    return view


def _forbidden_moves(name: str, game: Game, data: bytes, seat: int, legal: list[str],
                     rng: random.Random) -> list[str]:
    """Moves of `seat` the rules forbid now, made from legal ones by putting in place of one
    of its cards a card it does not hold (another seat's, the pile's) or another of its own."""
    sec = SECRETS[name]
    hand = Counter(sec.split(_get(sec.state.FromString(data), "hands", seat)))
    elsewhere = sorted(c for c in _cards(sec, data, seat) if c not in hand)
    out: list[str] = []
    for pool in (elsewhere, sorted(hand)):
        for _ in range(20):
            if not pool:
                break
            text = rng.choice(legal)
            spans = [(m.start(), m.end()) for m in _WORD.finditer(text) if m.group() in hand]
            if name == "dou_dizhu":  # a word of ranks: each rank is a card
                spans = [(i, i + 1) for m in _WORD.finditer(text)
                         if set(m.group()) <= DOU_DIZHU_RANKS
                         for i in range(m.start(), m.end()) if text[i] in hand]
            if not spans:
                continue
            a, b = rng.choice(spans)
            swapped = text[:a] + rng.choice(pool) + text[b:]
            try:
                canonical = game.format_move(game.parse_move(swapped))
            except ValueError:
                canonical = swapped  # malformed: refused as such
            if canonical not in legal:
                out.append(swapped)
                break
    return out


def _hand_tokens(game: Game, name: str, state: object, seat: int) -> list[str]:
    sec = SECRETS[name]
    msg = sec.state.FromString(game.encode(state))
    return sec.split(_get(msg, "hands", seat))  # every game's State has `hands`


@pytest.mark.e2e
@pytest.mark.parametrize("name", sorted(GAMES))
def test_hopping_the_seats_of_a_waiting_table_shows_no_card(
    server: ServerProcess, name: str
) -> None:
    """One client (no key needed) takes each free seat of a waiting table in turn, reads its
    view and its stream from the start, and gives the seat back: it learns no card of the
    deal the table gets once full, in any view or event."""
    game, sec = GAMES[name], SECRETS[name]
    field = game.info.view_field
    players = SETUPS[name][0].players
    hopper, filler = Client(server.address), Client(server.address)
    seen: list[Message] = []  # everything the hopper was sent before the table filled
    try:
        table = hopper.create(game=name, players=players)
        tid = table.table_id
        seen.append(table)
        for _ in range(2):  # twice round the table: events of earlier hops are replayed too
            for seat in range(players):
                reply = hopper.stub.JoinTable(
                    pb.JoinTableRequest(table_id=tid, seat=seat, name="hopper"), timeout=10)
                seen.append(reply)
                md = bearer(reply.token)
                view = hopper.stub.GetView(pb.GetViewRequest(table_id=tid), metadata=md,
                                           timeout=10)
                seen.append(view)
                stream = hopper.stub.StreamTable(
                    pb.StreamTableRequest(table_id=tid, from_version=0), metadata=md, timeout=30)
                for event in stream:
                    seen.append(event)
                    if event.version >= view.version:
                        stream.cancel()
                        break
                seen.append(hopper.stub.LeaveTable(pb.LeaveTableRequest(table_id=tid),
                                                   metadata=md, timeout=10))
        seen.append(hopper.view(tid))  # and as a spectator
        for seat in range(players):
            filler.join(tid, name=f"p{seat}", seat=seat)
        _, data = stored_table(server.db, tid)
        mine = [filler.view(tid, seat) for seat in range(players)]
    finally:
        hopper.close()
        filler.close()
    # the deal: every card in a hidden place of the state, and every card a view shows now
    deal = set(_cards(sec, data, None))
    for view in mine:
        deal |= set(view_cards(sec, getattr(view.view, field)))
    hands = [_get(sec.state.FromString(data), "hands", seat) for seat in range(players)]
    assert deal and all(hands), f"{name}: the full table has no deal"
    views = [m.view for m in seen if isinstance(m, pb.TableView)]
    views += [m.view.view for m in seen if isinstance(m, pb.TableEvent)]
    assert len(views) > 4 * players
    for view in views:
        shown = set(view_cards(sec, getattr(view, field))) & deal
        assert not shown, f"{name}: a seat of the waiting table was shown {sorted(shown)}"
    for message in seen:  # nor anywhere else in a reply, spelt as the hand is
        text = str(message)
        assert not [h for h in hands if len(h) >= 6 and h in text], (name, text)


@pytest.mark.e2e
@pytest.mark.parametrize("name", sorted(GAMES))
def test_a_fixed_deck_deals_the_same_hands_however_the_seats_were_taken(
    server: ServerProcess, name: str
) -> None:
    """Duplicate play (tournaments): tables given the same `deck` (and dealer) options get the
    same hands, whether their seats were taken at once or after clients came and went, and
    they are the hands the engine deals from those options."""
    game, sec = GAMES[name], SECRETS[name]
    players = SETUPS[name][0].players
    options = deal_options(name, players, {}, "duplicate", 1)
    engine = game.encode(game.new_game(players, options, "any seed"))
    want = [_get(sec.state.FromString(engine), "hands", s) for s in range(players)]
    client = Client(server.address)
    try:
        for hops in (0, 2):
            tid = client.create(game=name, players=players, options=options).table_id
            for _ in range(hops):
                for seat in range(players):
                    client.join(tid, name="comes and goes", seat=seat)
                    client.stub.LeaveTable(pb.LeaveTableRequest(table_id=tid),
                                           metadata=bearer(client.tokens[seat]), timeout=10)
            for seat in range(players):
                client.join(tid, name=f"p{seat}", seat=seat)
            _, data = stored_table(server.db, tid)
            got = [_get(sec.state.FromString(data), "hands", s) for s in range(players)]
            assert got == want, f"{name}: the deal differs after {hops} rounds of hops"
    finally:
        client.close()
