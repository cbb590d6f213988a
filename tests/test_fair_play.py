"""Fair dealing through a real server (docs/fair-play.md).

Nothing a seat or spectator is shown (create and join replies, the lobby, views, move replies,
every event of every stream) is computed from the cards or the seed: no digest of a fixed deck,
no seed, no salt. Each shuffle of a match is committed in every view from the event that dealt
it; the record reveals each commitment's salt and cards once the table is over, and
`croupier replay` verifies them and fails loudly on a record that was altered.
"""

from __future__ import annotations

import hashlib
import random
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from croupier.v1 import croupier_pb2 as pb
from google.protobuf import json_format
from google.protobuf.message import Message

from bots import records
from bots.tournament.schedule import deal_options
from engines import commitments
from engines.registry import GAMES
from tests.engine_kit import SETUPS
from tests.secrecy_support import SECRETS
from tests.support import CROUPIER, REPO, Client, ServerProcess, bearer

HEX64 = re.compile(r"[0-9a-f]{64}")
HEX32 = re.compile(r"[0-9a-f]{32}")


def strings(messages: list[Message]) -> Iterator[str]:
    """Every string in the messages (Struct options and map keys included)."""

    def walk(value: Any) -> Iterator[str]:
        if isinstance(value, str):
            yield value
        elif isinstance(value, dict):
            for k, v in value.items():
                yield k
                yield from walk(v)
        elif isinstance(value, list):
            for v in value:
                yield from walk(v)

    for m in messages:
        yield from walk(json_format.MessageToDict(m, preserving_proto_field_name=True))


def seated(client: Client, name: str, players: int, options: dict[str, Any],
           shown: list[Message]) -> str:
    """A table of `name` with every seat taken by `client`; each reply kept in `shown`."""
    table = client.create(game=name, players=players, options=options)
    shown.append(table)
    for seat in range(players):
        reply = client.stub.JoinTable(
            pb.JoinTableRequest(table_id=table.table_id, name=f"p{seat}", seat=seat), timeout=10
        )
        client.tokens[reply.seat] = reply.token
        shown.append(reply)
    return table.table_id


def play(client: Client, table_id: str, rng: random.Random, shown: list[Message]) -> None:
    """Plays to the end with random legal moves, keeping every view and move reply."""
    for _ in range(5000):
        public = client.view(table_id)
        shown.append(public)
        if not public.to_act:
            return
        seat = public.to_act[0]
        mine = client.view(table_id, seat)
        shown.append(mine)
        shown.append(client.move(table_id, seat, rng.choice(mine.legal_moves), mine.version))
    raise AssertionError("match not over after 5000 moves")


def export(client: Client, table_id: str) -> pb.GameRecord:
    return client.stub.ExportRecord(pb.ExportRecordRequest(table_id=table_id), timeout=10)


@pytest.mark.parametrize("name", sorted(GAMES))
def test_every_game_says_what_it_dealt_and_when_it_shuffled(name: str) -> None:
    # every set-up of the engine kit: the first deal and each later shuffle give cards to
    # commit to, one line per seat first; a plain move never counts as a shuffle, and the
    # same seed gives the same cards (the replay recomputes them)
    game = GAMES[name]
    for n, setup in enumerate(SETUPS[name]):
        state = game.new_game(setup.players, setup.options, f"fair-{n}")
        assert game.dealt(state) == game.dealt(game.new_game(setup.players, setup.options,
                                                            f"fair-{n}"))
        rng = random.Random(n)
        shuffles = [game.dealt(state)]
        while not game.is_over(state):
            seat = rng.choice(sorted(game.to_act(state)))
            after = game.apply(state, seat, rng.choice(list(game.legal_moves(state, seat))))
            if commitments.shuffled(game, state, after):
                shuffles.append(game.dealt(after))
            elif not game.is_over(after):
                assert game.shuffles(after) == game.shuffles(state)
            state = after
        for cards in shuffles:
            lines = cards.splitlines()
            assert [line.split(": ")[0] for line in lines[:setup.players]] == [
                f"seat {i}" for i in range(setup.players)], (name, setup)
        # every deal played was committed (re-deals and reshuffles add more)
        assert len(shuffles) >= game.result(state).deals_played, (name, setup)


@pytest.mark.e2e
@pytest.mark.parametrize("name", sorted(GAMES))
def test_nothing_shown_is_computed_from_the_deck_or_the_seed(
    server: ServerProcess, name: str
) -> None:
    # a fixed deck (as a tournament's tables get) and the table's own seed: neither, nor any
    # digest of them, nor a commitment's salt, appears in anything a client is shown while
    # the table is played; the table only says that its deck was fixed
    players = SETUPS[name][0].players
    options = deal_options(name, players, {}, "fair-play", 0)
    deck = options["deck"]
    client = Client(server.address)
    shown: list[Message] = []
    try:
        tid = seated(client, name, players, options, shown)
        shown.append(client.stub.ListTables(pb.ListTablesRequest(game=name, limit=50)))
        play(client, tid, random.Random(name), shown)
        for observer in (None, *range(players)):
            shown += list(client.stream(tid, seat=observer))
        record = export(client, tid)
    finally:
        client.close()
    texts = list(strings(shown))
    assert record.seed and record.commitments and record.options["deck"] == deck
    unsalted = hashlib.sha256(deck.encode()).hexdigest()
    secret = [deck, unsalted, record.seed, hashlib.sha256(record.seed.encode()).hexdigest()]
    secret += [c.salt for c in record.commitments]
    assert not [t for t in texts if t.startswith("sha256:")]
    assert not [(s, t) for t in texts for s in secret if s in t]
    tables = [m.table for m in shown if isinstance(m, pb.TableView | pb.JoinTableResponse)]
    tables += [m.view.table for m in shown if isinstance(m, pb.TableEvent)]
    tables += [m for m in shown if isinstance(m, pb.Table)]
    tables += [t for m in shown if isinstance(m, pb.ListTablesResponse) for t in m.tables
               if t.table_id == tid]
    assert len(tables) > 2 * players
    assert all(t.fixed_deck and "deck" not in t.options for t in tables)


# one set-up per game with several shuffles in most matches (several deals, re-deals or
# reshuffles of the draw pile), short enough to play over RPC
SHUFFLING = [
    ("dou_dizhu", 3, {"deals": 3}),
    ("doppelkopf", 4, {"deals": 2}),
    ("dobro", 3, {"rounds": 2}),
    ("dos", 2, {"target": 1}),
    ("sobe_e_desce", 4, {"max_deals": 2}),
]


def _played_record(server: ServerProcess, name: str, players: int, options: dict[str, Any]
                   ) -> tuple[pb.GameRecord, dict[int | None, list[pb.TableEvent]]]:
    client = Client(server.address)
    try:
        tid = seated(client, name, players, options, [])
        before = client.view(tid, 0)
        client.play_to_end(tid, random.Random(f"{name}-commit"))
        streams = {o: list(client.stream(tid, seat=o)) for o in (None, *range(players))}
        record = export(client, tid)
        # a call with a seat token after the end shows the last commitment, still unrevealed
        after = client.stub.GetView(pb.GetViewRequest(table_id=tid),
                                    metadata=bearer(client.tokens[0]), timeout=10)
    finally:
        client.close()
    assert before.HasField("commitment") and after.commitment.sha256
    assert not after.commitment.salt and not after.commitment.cards
    return record, streams


@pytest.mark.e2e
@pytest.mark.parametrize(("name", "players", "options"), SHUFFLING,
                         ids=[s[0] for s in SHUFFLING])
def test_every_shuffle_is_committed_in_every_view_and_revealed_in_the_record(
    server: ServerProcess, name: str, players: int, options: dict[str, Any]
) -> None:
    record, streams = _played_record(server, name, players, options)
    commitments = list(record.commitments)
    assert commitments and [c.index for c in commitments] == list(range(len(commitments)))
    if name != "dos":  # a Dos round may end before its pile runs out
        assert len(commitments) >= 2
    for c in commitments:
        # the record reveals what the views withheld, and it checks by hand (docs/fair-play.md)
        assert HEX32.fullmatch(c.salt) and HEX64.fullmatch(c.sha256)
        assert hashlib.sha256(f"{c.cards}\nsalt {c.salt}\n".encode()).hexdigest() == c.sha256
        assert c.cards.startswith("seat 0: ")
    assert len({c.salt for c in commitments}) == len(commitments)  # a fresh salt each time
    split = SECRETS[name].split
    for observer, events in streams.items():
        assert events[-1].kind == pb.EVENT_KIND_END
        for e in events:
            published = [c for c in commitments if c.version <= e.version]
            if not published:  # nothing dealt yet: nothing committed
                assert not e.view.HasField("commitment")
                continue
            last = published[-1]
            assert e.view.commitment == pb.DealCommitment(
                index=last.index, deal=last.deal, version=last.version, sha256=last.sha256
            )
            if observer is not None and e.version == last.version:
                # the event that dealt the cards: the seat's hand is its line of the cards
                line = last.cards.splitlines()[observer]
                hand = getattr(e.view.view, e.view.view.WhichOneof("game")).hand
                assert sorted(split(line.split(": ", 1)[1])) == sorted(split(hand))
        seen = [e.view.commitment.sha256 for e in events if e.view.HasField("commitment")]
        assert list(dict.fromkeys(seen)) == [c.sha256 for c in commitments]
    assert records.check(record).commitments == len(commitments)


def _tampered(record: pb.GameRecord) -> dict[str, pb.GameRecord]:
    """Copies of the record, each altered in one way a dishonest server might try."""
    out: dict[str, pb.GameRecord] = {}

    def variant(what: str) -> pb.GameRecord:
        copy = pb.GameRecord()
        copy.CopyFrom(record)
        out[what] = copy
        return copy

    first = variant("another salt").commitments[0]
    first.salt = f"{(int(first.salt[0], 16) + 1) % 16:x}{first.salt[1:]}"
    lines = record.commitments[0].cards.splitlines()
    swapped = variant("hands swapped").commitments[0]
    swapped.cards = "\n".join([lines[1], lines[0], *lines[2:]])
    # new cards with a digest that matches them: the replay finds they are not the deal's
    redone = variant("other cards, digest recomputed").commitments[0]
    redone.cards = swapped.cards
    redone.sha256 = hashlib.sha256(f"{redone.cards}\nsalt {redone.salt}\n".encode()).hexdigest()
    del variant("a commitment left out").commitments[-1]
    variant("a short salt").commitments[0].salt = "00ff"
    return out


@pytest.mark.e2e
def test_replay_verifies_the_commitments_and_refuses_an_altered_record(
    server: ServerProcess, tmp_path: Path
) -> None:
    record, _ = _played_record(server, "dou_dizhu", 3, {"deals": 2})
    good = tmp_path / "good.json"
    records.save(record, good)
    run = subprocess.run([*CROUPIER, "replay", str(good)], cwd=REPO, capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert f"{len(record.commitments)} deal commitment(s) verified" in run.stdout
    for what, bad in _tampered(record).items():
        with pytest.raises(records.ReplayError):
            records.replay(bad)
        path = tmp_path / f"{what.replace(' ', '-')}.json"
        records.save(bad, path)
        run = subprocess.run([*CROUPIER, "replay", str(path)], cwd=REPO, capture_output=True,
                             text=True, timeout=60)
        assert run.returncode == 1 and "FAILED" in run.stderr, what
