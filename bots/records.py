"""Game records as JSON files, and `croupier replay`: a record checked move by move against the
engine, so that a result can be trusted without trusting the server that produced it.

A record (croupier.v1.GameRecord, exported by the ExportRecord RPC once a table is finished)
holds the engine's initial state and seed, every move in canonical notation with its seat,
and the result. Replaying re-creates the deal from the seed and options, applies every move
through `engines.registry.get_game`, and compares the final result. A table closed as
abandoned (`end_reason`) stops where it was closed: its moves replay the same, and its result
is the scores reached; one closed before its last seat was taken has no deal at all.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from croupier.v1 import croupier_pb2 as pb
from google.protobuf import json_format

from engines import commitments
from engines.contract import Game, IllegalMove
from engines.registry import get_game


class ReplayError(Exception):
    """The record does not replay: the message says at which move and why."""


SALT = re.compile(f"[0-9a-f]{{{2 * commitments.SALT_BYTES}}}")


def to_json(record: pb.GameRecord) -> str:
    return json_format.MessageToJson(record, indent=1, sort_keys=True)


def save(record: pb.GameRecord, path: Path) -> None:
    """Written to a temporary name first, so a killed writer leaves no half record."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(to_json(record))
    tmp.replace(path)


def load(path: Path) -> pb.GameRecord:
    try:
        text = path.read_text()
    except OSError as e:
        raise ReplayError(f"cannot read {path}: {e.strerror}") from None
    try:
        return json_format.Parse(text, pb.GameRecord())
    except json_format.ParseError as e:
        raise ReplayError(f"{path} is not a game record: {e}") from None


# Options of the table rather than the game (the server's TABLE_OPTIONS; bots/ cannot import
# service/): the server never gives them to the engine, so neither does a replay.
TABLE_OPTIONS = frozenset({"private", "turn_seconds", "match_seconds", "ladder", "label", "rated"})


def _options(record: pb.GameRecord) -> dict:
    # Struct numbers are doubles: give integral ones back their integer type
    return {
        k: int(v) if isinstance(v, float) and v.is_integer() else v
        for k, v in json_format.MessageToDict(record.options).items()
        if k not in TABLE_OPTIONS
    }


class Seals:
    """The record's deal commitments checked as a replay reaches each shuffle: the cards the
    engine deals there are the record's, and their SHA-256 with the revealed salt is the
    digest the table published (engines.commitments). A record without any (a server from
    before commitments) has nothing to check: `count` stays 0."""

    def __init__(self, game: Game, record: pb.GameRecord) -> None:
        self.game = game
        self.commitments = list(record.commitments)
        self.count = 0

    def check(self, before: Any | None, after: Any, step: pb.RecordedMove | None) -> None:
        if not self.commitments or not commitments.shuffled(self.game, before, after):
            return
        where = "the deal" if step is None else f"the shuffle of move version {step.version}"
        if self.count >= len(self.commitments):
            raise ReplayError(f"{where} has no commitment in the record: the record was "
                              "altered (or the server skipped one)")
        c = self.commitments[self.count]
        name = f"commitment {self.count}"
        if c.index != self.count or c.deal != self.game.deal_number(after):
            raise ReplayError(f"{name} says index {c.index}, deal {c.deal}; the replay is at "
                              f"index {self.count}, deal {self.game.deal_number(after)}")
        if step is not None and c.version != step.version:
            raise ReplayError(f"{name} was published at version {c.version}, but {where} "
                              "dealt the cards")
        if not SALT.fullmatch(c.salt):
            raise ReplayError(f"{name} has no salt of {commitments.SALT_BYTES * 8} bits "
                              f"({2 * commitments.SALT_BYTES} hex digits)")
        if c.cards != self.game.dealt(after):
            raise ReplayError(f"{name}: the record's cards are not the ones {where} dealt")
        if commitments.digest(c.cards, c.salt) != c.sha256:
            raise ReplayError(f"{name}: SHA-256 of the cards and salt is not the published "
                              f"digest {c.sha256[:16]}...: the record was altered")
        self.count += 1

    def finish(self) -> None:
        if self.count < len(self.commitments):
            raise ReplayError(f"the record holds {len(self.commitments)} commitments, the "
                              f"replay reaches {self.count} shuffles")


@dataclass(frozen=True)
class Replayed:
    """What a replay established: the result, and how many deal commitments it verified."""

    result: pb.Result
    commitments: int


def replay(record: pb.GameRecord) -> pb.Result:
    """The record's result recomputed by the engine; ReplayError at the first disagreement
    (its moves, its result or its deal commitments)."""
    return check(record).result


def check(record: pb.GameRecord) -> Replayed:
    """`replay`, also saying how many deal commitments were verified."""
    try:
        game: Game = get_game(record.game)
    except ValueError as e:
        raise ReplayError(str(e)) from None
    options = _options(record)
    abandoned = record.end_reason == pb.END_REASON_ABANDONED
    if abandoned and not record.initial_state:
        # closed before every seat was taken: nothing was dealt, so nothing may follow
        nothing = pb.Result(totals=[0] * record.players, last_deal=[0] * record.players)
        if record.moves or record.seed or record.commitments or record.result != nothing:
            raise ReplayError("the record of a table closed before its deal holds moves, a "
                              "seed or scores: the record was altered")
        return Replayed(nothing, 0)
    try:
        state = game.decode(record.initial_state)
    except Exception as e:  # a tampered state may fail anywhere inside the decoder
        raise ReplayError(f"the initial state is not a {record.game} state: {e}") from None
    if record.seed:
        try:
            fresh = game.new_game(record.players, options, record.seed)
        except ValueError as e:
            raise ReplayError(f"the options do not make a {record.game} game: {e}") from None
        if game.encode(fresh) != record.initial_state:
            raise ReplayError(
                "the initial state is not the deal that the seed and options make: the record "
                "was altered"
            )
    seals = Seals(game, record)
    seals.check(None, state, None)
    if game.num_players(state) != record.players:
        raise ReplayError(f"the initial state has {game.num_players(state)} players, "
                          f"the record says {record.players}")
    for i, step in enumerate(record.moves, start=1):
        where = f"move {i} (version {step.version}, seat {step.seat}, {step.move!r})"
        acting = game.to_act(state)
        if step.seat not in acting:
            who = ", ".join(map(str, sorted(acting))) or "nobody (the match is over)"
            raise ReplayError(f"{where}: seat {step.seat} may not act; to act: {who}")
        try:
            move = game.parse_move(step.move)
        except ValueError as e:
            raise ReplayError(f"{where}: malformed: {e}") from None
        if game.format_move(move) != step.move:
            raise ReplayError(f"{where}: not in canonical notation "
                              f"({game.format_move(move)!r})")
        try:
            after = game.apply(state, step.seat, move)
        except IllegalMove as e:
            raise ReplayError(f"{where}: illegal: {e}") from None
        seals.check(state, after, step)
        state = after
    seals.finish()
    if abandoned and game.is_over(state):
        raise ReplayError(f"after {len(record.moves)} moves the match is over, yet the record "
                          "says the table was closed as abandoned")
    if not abandoned and not game.is_over(state):
        raise ReplayError(f"after {len(record.moves)} moves the match is not over")
    r = game.result(state)
    got = pb.Result(totals=r.totals, last_deal=r.last_deal, finished=r.finished,
                    winners=r.winners, deals_played=r.deals_played)
    if got != record.result:
        raise ReplayError(
            f"the result differs: the engine says totals {list(got.totals)}, winners "
            f"{list(got.winners)}; the record says totals {list(record.result.totals)}, "
            f"winners {list(record.result.winners)}"
        )
    return Replayed(got, seals.count)


def main(argv: list[str] | None = None) -> int:
    """`croupier replay RECORD...`: 0 only if every record reproduces its moves and result."""
    parser = argparse.ArgumentParser(
        prog="croupier replay",
        description="Replay game records (JSON, from ExportRecord or a tournament's records/) "
        "through the engine; exit 0 only if every move is legal and the result matches.",
    )
    parser.add_argument("records", nargs="+", type=Path, metavar="RECORD")
    parser.add_argument("-q", "--quiet", action="store_true", help="print failures only")
    args = parser.parse_args(argv)
    failed = 0
    for path in args.records:
        try:
            record = load(path)
            done = check(record)
        except ReplayError as e:
            failed += 1
            print(f"{path}: FAILED: {e}", file=sys.stderr)
            continue
        if not args.quiet:
            result = done.result
            closed = (" (closed as abandoned)"
                      if record.end_reason == pb.END_REASON_ABANDONED else "")
            print(f"{path}: ok, {len(record.moves)} moves, totals {list(result.totals)}, "
                  f"winners {list(result.winners)}{closed}; {_sealed_text(record, done)}")
    return 1 if failed else 0


def _sealed_text(record: pb.GameRecord, done: Replayed) -> str:
    if done.commitments:
        return (f"{done.commitments} deal commitment(s) verified: the cards played are the "
                "ones the table committed to")
    if not record.initial_state:
        return "no deal to verify"
    return ("no deal commitments to verify (a record of a server from before they were "
            "published)")


if __name__ == "__main__":
    sys.exit(main())
