"""Game records over real gRPC: ExportRecord on a real server, `croupier replay` on the file.

A record is refused while its table is played (it would show every hand); once finished it
replays through the engine to the same result, and any tampering is caught with a message.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest
from croupier.v1 import croupier_pb2 as pb
from google.protobuf import struct_pb2

from bots import records
from tests.support import REPO, Client, ServerProcess, bearer, rpc_code

C = grpc.StatusCode
pytestmark = pytest.mark.e2e


def _export(client: Client, table_id: str) -> pb.GameRecord:
    return client.stub.ExportRecord(pb.ExportRecordRequest(table_id=table_id), timeout=10)


def _replay_cli(*paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "service.cli", "replay", *map(str, paths)],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )


@pytest.fixture
def finished(client: Client) -> tuple[str, pb.GameRecord]:
    options = struct_pb2.Struct()
    options.update({"deals": 2})
    table_id = client.seated_table(options=options)
    code, message = rpc_code(_export, client, table_id)
    assert code == C.FAILED_PRECONDITION and "not finished" in message
    client.play_to_end(table_id, random.Random(7))
    return table_id, _export(client, table_id)


def test_export_refused_before_the_end_and_for_bad_ids(client: Client) -> None:
    table_id = client.seated_table()
    client.step(table_id, random.Random(1))
    code, message = rpc_code(_export, client, table_id)
    assert code == C.FAILED_PRECONDITION and "not finished" in message
    assert rpc_code(_export, client, "nope")[0] == C.NOT_FOUND
    assert rpc_code(_export, client, "")[0] == C.INVALID_ARGUMENT
    assert rpc_code(_export, client, "x" * 500)[0] == C.INVALID_ARGUMENT


def test_a_private_tables_record_goes_only_to_its_seats(client: Client) -> None:
    options = struct_pb2.Struct()
    options.update({"private": True})
    table_id = client.seated_table(options=options)
    rng = random.Random(3)
    while acting := client.view(table_id, 0).to_act:  # no spectator: every view with a token
        mine = client.view(table_id, acting[0])
        client.move(table_id, acting[0], rng.choice(mine.legal_moves), mine.version)
    code, message = rpc_code(_export, client, table_id)
    assert code == C.PERMISSION_DENIED and "private" in message
    wrong = client.stub.ExportRecord
    code, _ = rpc_code(wrong, pb.ExportRecordRequest(table_id=table_id),
                       metadata=bearer("x" * 32), timeout=10)
    assert code == C.PERMISSION_DENIED
    rec = client.stub.ExportRecord(pb.ExportRecordRequest(table_id=table_id),
                                   metadata=bearer(client.tokens[1]), timeout=10)
    assert rec.table_id == table_id and rec.result.finished and rec.options["private"]


def test_record_holds_every_move_and_replays(
    finished: tuple[str, pb.GameRecord], client: Client, tmp_path: Path
) -> None:
    table_id, rec = finished
    assert rec.table_id == table_id and rec.game == "dou_dizhu" and rec.players == 3
    assert rec.seed and rec.initial_state and rec.result.finished
    assert rec.options["deals"] == 2 and rec.result.deals_played == 2
    assert [s.name for s in rec.seats] == ["p0", "p1", "p2"]
    # the moves are exactly the stream's, unredacted, with their versions
    moves = [e for e in client.stream(table_id) if e.kind == pb.EVENT_KIND_MOVE]
    assert [(m.version, m.seat) for m in rec.moves] == [(e.version, e.seat) for e in moves]
    assert sum(m.deal_over for m in rec.moves) == 2
    final = client.view(table_id)
    assert rec.result == final.result and rec.version == final.version
    path = tmp_path / "game.json"
    records.save(rec, path)
    assert records.replay(records.load(path)) == rec.result
    done = _replay_cli(path)
    assert done.returncode == 0, done.stderr
    assert "ok" in done.stdout


def _tampered(rec: pb.GameRecord, how: str) -> pb.GameRecord:
    bad = pb.GameRecord()
    bad.CopyFrom(rec)
    if how == "result":
        bad.result.totals[0] += 1
    elif how == "seat":
        bad.moves[3].seat = (bad.moves[3].seat + 1) % 3
    elif how == "move":
        # a single card of a rank the seat going out does not hold: never legal (a card it
        # holds could be, and would leave the match unfinished instead)
        last = bad.moves[-1].move
        bad.moves[-1].move = next(r for r in "3456789TJQKA2BR" if r not in last)
    elif how == "truncated":
        del bad.moves[-1]
    elif how == "seed":
        bad.seed = "0" * 32
    elif how == "options":
        bad.options.update({"deals": 1})
    elif how == "state":
        bad.initial_state = b"\x00garbage"
    return bad


@pytest.mark.parametrize(
    ("how", "says"),
    [
        ("result", "result differs"),
        ("seat", "may not act"),
        ("move", "move "),
        ("truncated", "not over"),
        ("seed", "altered"),
        ("options", "altered"),
        ("state", "state"),
    ],
)
def test_tampered_record_fails_with_a_message(
    finished: tuple[str, pb.GameRecord], tmp_path: Path, how: str, says: str
) -> None:
    _, rec = finished
    path = tmp_path / f"{how}.json"
    records.save(_tampered(rec, how), path)
    with pytest.raises(records.ReplayError, match=says):
        records.replay(records.load(path))
    done = _replay_cli(path)
    assert done.returncode == 1
    assert "FAILED" in done.stderr and says.strip() in done.stderr


def test_replay_of_a_file_that_is_no_record(tmp_path: Path) -> None:
    path = tmp_path / "junk.json"
    path.write_text(json.dumps({"game": 3, "moves": "no"}))
    done = _replay_cli(path, tmp_path / "missing.json")
    assert done.returncode == 1
    assert "not a game record" in done.stderr and "cannot read" in done.stderr


def test_server_log_and_errors_do_not_leak_before_the_end(
    server: ServerProcess, client: Client
) -> None:
    """While a table is played, the refusals its seats get (the record, moves out of turn,
    moves of cards a seat does not hold but another does) tell no seat another's cards, and
    the server's log names no card a spectator did not see: each move as spectators saw it,
    refusals by their kind, no hand and no token anywhere."""
    from collections import Counter

    from tests.secrecy_support import SECRETS, card_tokens, leaked, view_cards

    sec = SECRETS["dou_dizhu"]
    table_id = client.seated_table()
    rng = random.Random(12)
    hands: set[str] = set()
    refused: list[tuple[int, str, str, Counter[str], Counter[str]]] = []

    def refusal(asker: int | None, call, *args: object, sent: str = "") -> None:
        code, message = rpc_code(call, *args)
        assert code == C.FAILED_PRECONDITION, message
        mine = Counter[str]() if asker is None else view_cards(sec, views[asker].view.dou_dizhu)
        hidden = Counter("".join(h for s, h in held.items() if s != asker))
        refused.append((-1 if asker is None else asker, sent, message, mine, hidden))

    for _ in range(12):  # the bidding and the first plays
        public = client.view(table_id)
        seat = public.to_act[0]
        views = {s: client.view(table_id, s) for s in range(3)}
        held = {s: v.view.dou_dizhu.hand for s, v in views.items()}
        hands.update(held.values())
        refusal(None, _export, client, table_id)
        # a rank another seat holds and the mover does not, sent by the mover and out of turn
        ranks = [r for s, h in held.items() if s != seat for r in h if r not in held[seat]]
        if ranks:
            rank = rng.choice(ranks)
            refusal(seat, client.move, table_id, seat, rank, sent=rank)
            other = (seat + 1) % 3
            refusal(other, client.move, table_id, other, rank, sent=rank)
        client.move(table_id, seat, rng.choice(views[seat].legal_moves), views[seat].version)
    assert sum(1 for _, sent, *_ in refused if sent) >= 10
    for asker, sent, message, mine, hidden in refused:
        assert not any(h in message for h in hands), message
        allowed = mine + Counter(sent)
        assert not leaked("dou_dizhu", message, allowed, hidden, sent), (asker, sent, message)

    text = server.log_text()
    assert not any(h in text for h in hands), "a hand in the server log"
    assert not any(t in text for t in client.tokens.values()), "a seat token in the server log"
    lines = [line for line in server.log_lines() if line.get("table") == table_id]
    version, spectated = client.view(table_id).version, []
    stream = client.stream(table_id, timeout=10)
    for e in stream:
        if e.kind == pb.EVENT_KIND_MOVE:
            spectated.append(e.move)
        if e.version >= version:
            stream.cancel()
            break
    rpcs = [line for line in lines if line["event"] == "rpc"]  # also: table_created
    logged = [line["move"] for line in rpcs
              if line["method"] == "SubmitMove" and line["code"] == "OK"]
    assert logged == spectated
    failed = [line for line in rpcs if line["code"] != "OK"]
    assert len(failed) == len(refused)
    assert {line["error"] for line in failed if line["method"] == "SubmitMove"} >= {
        "illegal move"}  # the reason, which can tell what the mover holds, is not logged
    for line in lines:  # apart from the moves, no text of any line names a card
        said = " ".join(v for k, v in line.items()
                        if isinstance(v, str) and k not in ("move", "timestamp"))
        assert not card_tokens("dou_dizhu", said.replace(table_id, " ")), line


def test_export_from_the_redis_store(tmp_path: Path) -> None:
    """The record is built from the store's event log: the Redis stream serves it alike."""
    from tests.store_support import REDIS_URL, redis_cleanup, redis_prefix

    prefix = redis_prefix()
    proc = ServerProcess(db=tmp_path / "redis-server", store=f"{REDIS_URL}?prefix={prefix}")
    try:
        proc.start()
        client = Client(proc.address)
        try:
            table_id = client.seated_table()
            client.play_to_end(table_id, random.Random(3))
            rec = _export(client, table_id)
        finally:
            client.close()
    finally:
        if proc.proc is not None:
            proc.stop()
        redis_cleanup(prefix)
    assert rec.moves and records.replay(rec) == rec.result


def test_records_of_abandoned_tables_say_so_and_replay(tmp_path: Path) -> None:
    """A table played a little and then left, and one nobody took every seat of: closed as
    abandoned, their records say so and replay as far as they went."""
    server = ServerProcess(db=tmp_path / "croupier.db", extra=(
        "--fill-interval", "0.05", "--abandon-waiting-after", "1")).start()
    client = Client(server.address)
    try:
        played = client.seated_table()
        rng = random.Random(2)
        for _ in range(4):
            client.step(played, rng)
        for token in client.tokens.values():
            client.stub.LeaveTable(pb.LeaveTableRequest(table_id=played),
                                   metadata=bearer(token), timeout=10)
        never = client.create(game="dos", players=2).table_id
        deadline = time.monotonic() + 30
        while any(client.view(t).table.status != pb.TABLE_STATUS_ABANDONED
                  for t in (played, never)):
            assert time.monotonic() < deadline, "the tables were not closed"
            time.sleep(0.05)
        rec, empty = _export(client, played), _export(client, never)
    finally:
        client.close()
        server.stop()
    assert rec.end_reason == empty.end_reason == pb.END_REASON_ABANDONED
    assert len(rec.moves) == 4 and rec.initial_state and rec.seed and not rec.result.finished
    assert not empty.initial_state and not empty.seed and not empty.moves
    paths = [tmp_path / "played.json", tmp_path / "never.json"]
    for r, path in zip((rec, empty), paths, strict=True):
        records.save(r, path)
        assert records.replay(records.load(path)) == r.result
    done = _replay_cli(*paths)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("(closed as abandoned)") == 2
    for bad in (_tampered(rec, "seat"), _tampered(rec, "seed")):
        with pytest.raises(records.ReplayError):
            records.replay(bad)
    scored = pb.GameRecord()
    scored.CopyFrom(empty)
    scored.result.totals[0] = 5
    with pytest.raises(records.ReplayError, match="altered"):
        records.replay(scored)
