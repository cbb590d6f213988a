"""`croupier tables` against real server processes: the lobby with its filters, page by page,
one line per table, and a watch command that works as printed."""

from __future__ import annotations

import re
import shlex
import subprocess
import time
from argparse import Namespace
from collections.abc import Iterator

import pytest
from croupier.v1 import croupier_pb2 as pb

from clients.lobby import DEFAULT_SERVER, lines, watch_command
from tests.support import CROUPIER, REPO, Client, ServerProcess

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def lobby(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    proc = ServerProcess(db=tmp_path_factory.mktemp("lobby") / "croupier.db").start()
    yield proc
    proc.stop()


def tables(server: ServerProcess, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CROUPIER, "tables", "--server", server.address, *flags],
                          cwd=REPO, capture_output=True, text=True, timeout=60)


def rows(out: str) -> dict[str, list[str]]:
    """Table id -> the cells of its line (the watch command last, whole)."""
    found = {}
    header, *body = out.splitlines()
    assert header.split()[:6] == ["TABLE", "GAME", "SEATED", "STATUS", "AGE", "BOTS"]
    for line in body:
        cells = line.split(None, 6)
        found[cells[0]] = cells
    assert len(found) == len(body), "a table listed twice"
    return found


def test_the_lobby_line_by_line_with_its_filters(lobby: ServerProcess) -> None:
    client = Client(lobby.address)
    try:
        one = client.create(game="dou_dizhu").table_id
        client.join(one, name="ann")
        bot_seats = [pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN),
                     pb.SeatSpec(kind=pb.SEAT_KIND_BOT, bot_level="hard")]
        dos = client.create(game="dos", players=2, seats=bot_seats).table_id
        full = client.seated_table()
        mixed = client.create(game="sobe_e_desce", players=4, seats=[
            pb.SeatSpec(kind=pb.SEAT_KIND_BOT, bot_level=level)
            for level in ("random", "expert", "random", "easy")]).table_id
        made = {one, dos, full, mixed}
    finally:
        client.close()
    done = tables(lobby, "--all", "--limit", "2")
    assert done.returncode == 0, done.stderr
    got = rows(done.stdout)
    assert set(got) == made  # every page, each table once
    assert got[one][1:6] == ["dou_dizhu", "1/3", "waiting", got[one][4], "-"]
    assert got[dos][1:4] == ["dos", "0/2", "waiting"] and got[dos][5] == "hard"
    assert got[full][1:4] == ["dou_dizhu", "3/3", "playing"] and got[full][5] == "-"
    assert got[mixed][1:4] == ["sobe_e_desce", "0/4", "waiting"]
    assert got[mixed][5] == "random,expert,easy"
    for tid, cells in got.items():
        assert re.fullmatch(r"\d+s", cells[4]), cells  # made seconds ago
        assert shlex.split(cells[6]) == ["croupier", "watch", tid, "--server", lobby.address]
    # one page only: the first two, newest first, and a word that there are more
    first = tables(lobby, "--limit", "2")
    assert first.returncode == 0 and list(rows(first.stdout)) == [mixed, full]
    assert "--all" in first.stderr
    only = {
        ("--game", "dos"): {dos},
        ("--status", "playing"): {full},
        ("--status", "waiting", "--game", "dou_dizhu"): {one},
        ("--waiting-for-bot",): {dos, mixed},
        ("--waiting-for-bot", "--bot-levels", "easy,hard"): {dos, mixed},
        ("--waiting-for-bot", "--bot-levels", "expert"): {mixed},
    }
    for flags, want in only.items():
        done = tables(lobby, *flags)
        assert done.returncode == 0, (flags, done.stderr)
        assert set(rows(done.stdout)) == want, flags
    none = tables(lobby, "--waiting-for-bot", "--bot-levels", "medium")
    assert none.returncode == 0 and none.stdout.strip() == "No tables."
    # what the server refuses is said, with its reason, and the exit status is 1
    bad = tables(lobby, "--bot-levels", "hard")
    assert bad.returncode == 1 and "INVALID_ARGUMENT" in bad.stderr
    assert "waiting_for_bot" in bad.stderr
    gone = subprocess.run([*CROUPIER, "tables", "--server", lobby.address, "--status", "lost"],
                          cwd=REPO, capture_output=True, text=True, timeout=60)
    assert gone.returncode == 2 and "invalid choice" in gone.stderr


def test_abandoned_tables_only_when_asked_and_the_watch_command_works(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    server = ServerProcess(
        db=tmp_path_factory.mktemp("lobby-short") / "croupier.db",
        extra=("--fill-interval", "0.05", "--abandon-waiting-after", "1"),
    ).start()
    client = Client(server.address)
    try:
        tid = client.create(game="dos", players=2).table_id
        deadline = time.monotonic() + 30
        while client.view(tid).table.status != pb.TABLE_STATUS_ABANDONED:
            assert time.monotonic() < deadline, "the table was not closed"
            time.sleep(0.05)
        listed = tables(server)
        assert listed.returncode == 0 and tid not in listed.stdout
        for flags in (("--include-abandoned",), ("--status", "abandoned")):
            done = tables(server, *flags)
            assert done.returncode == 0, done.stderr
            cells = rows(done.stdout)[tid]
            assert cells[1:4] == ["dos", "0/2", "abandoned"]
        # the watch command as printed follows the table to its END event and exits 0
        words = shlex.split(cells[6])
        assert words[:2] == ["croupier", "watch"]
        watched = subprocess.run([*CROUPIER, *words[1:]], cwd=REPO, capture_output=True,
                                 text=True, timeout=60)
        assert watched.returncode == 0, watched.stdout + watched.stderr
        assert re.search(r"\[v\d+\] end: closed as abandoned", watched.stdout), watched.stdout
        assert "Final scores" not in watched.stdout  # nobody played: no scores to show
    finally:
        client.close()
        server.stop()


def test_the_default_server_needs_no_server_flag() -> None:
    plain = Namespace(server=DEFAULT_SERVER, tls_ca="", tls_cert="", tls_key="")
    assert watch_command("abc", plain) == "croupier watch abc"
    tls = Namespace(server="db.example:443", tls_ca="certs/ca dir/ca.pem", tls_cert="",
                    tls_key="")
    assert shlex.split(watch_command("abc", tls)) == [
        "croupier", "watch", "abc", "--server", "db.example:443", "--tls-ca", "certs/ca dir/ca.pem"]
    cells = ("id", "dos", "1/2", "waiting", "5s", "-", "croupier watch id")
    header, line = lines([cells])
    assert line.split() == ["id", "dos", "1/2", "waiting", "5s", "-", "croupier", "watch", "id"]
    assert header.index("GAME") == line.index("dos")  # in columns
