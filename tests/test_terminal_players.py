"""`croupier play` as a player, through a pseudo-terminal against real servers: the guest
identity made on first use and kept in the user's config directory (0600, one entry per
server) and reused, a refused one replaced, a provider's token from a file, and the seat
that comes back to its player from another terminal."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from croupier.v1 import croupier_pb2 as pb

from tests.bot_support import CROUPIER, REPO, Bots, child_env
from tests.identity_support import SigningKey, claims, trusting_server, write_jwks
from tests.pty_support import play_in_pty
from tests.support import Client, ServerProcess

pytestmark = pytest.mark.e2e

YOU_ARE = r"You are (\S+) \((a new guest|guest|signed in), player (\S+)\)\."
SEATED = r"table ([0-9a-f]+), you are seat (\d+)"


@pytest.fixture(scope="module")
def provider_key() -> SigningKey:
    return SigningKey.make("term-1", "ES256")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, provider_key: SigningKey
           ) -> Iterator[ServerProcess]:
    """Guests on (the default) and the tests' provider trusted through a JWKS file."""
    tmp = tmp_path_factory.mktemp("terminal_players")
    jwks = write_jwks(tmp / "jwks.json", provider_key)
    proc = trusting_server(tmp / "server", str(jwks))
    yield proc
    proc.stop()


@pytest.fixture
def client(server: ServerProcess) -> Iterator[Client]:
    c = Client(server.address)
    yield c
    c.close()


def spawn(server: ServerProcess, config: Path, *args: str, **env: str) -> pexpect.spawn:
    return pexpect.spawn(
        CROUPIER, ["play", "--server", server.address, *args], cwd=str(REPO),
        env=child_env(NO_COLOR="1", TERM="xterm", XDG_CONFIG_HOME=str(config), **env),
        encoding="utf-8", timeout=30, dimensions=(50, 140),
    )


def seated_run(server: ServerProcess, config: Path, table_id: str, *args: str,
               end: str = "quit", **env: str) -> tuple[re.Match[str], int, int | None]:
    """`croupier play --table ID` up to its seat, then ended by `end` ("quit" or "kill":
    SIGKILL, so the seat is never given back): (the YOU_ARE match, the seat, exit status)."""
    child = spawn(server, config, "--table", table_id, *args, **env)
    try:
        child.expect(YOU_ARE)
        who = child.match
        child.expect(SEATED)
        assert child.match.group(1) == table_id
        seat = int(child.match.group(2))
        child.expect("Type 'quit'")
        if end == "quit":
            child.sendline("quit")
            child.expect(pexpect.EOF)
        else:
            child.kill(signal.SIGKILL)
            child.expect(pexpect.EOF)
    finally:
        child.close()
    return who, seat, child.exitstatus


def identity_file(config: Path) -> Path:
    return config / "croupier" / "identity.json"


def test_a_guest_is_made_on_first_use_kept_private_and_reused(
    server: ServerProcess, client: Client, tmp_path: Path
) -> None:
    config = tmp_path / "config"
    table = client.create("dou_dizhu")
    who, seat, status = seated_run(server, config, table.table_id, "--name", "Tess",
                                   end="kill")
    assert who.group(1) == "Tess" and who.group(2) == "a new guest", who.group(0)
    player_id = who.group(3)
    assert player_id.startswith("guest:")
    kept = identity_file(config)
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert stat.S_IMODE(kept.parent.stat().st_mode) & 0o077 == 0
    entry = json.loads(kept.read_text())["servers"][server.address]
    assert entry["player_id"] == player_id and entry["token"].count(".") == 2
    # the seat is the player's: another terminal of the same user gets it back (the first
    # was killed, its seat never given back), without making a second guest
    seats = client.view(table.table_id).table.seats
    assert seats[seat].player_id == player_id and seats[seat].occupied
    # someone else (another user, another config) gets another seat, not this one
    other, other_seat, _ = seated_run(server, tmp_path / "other", table.table_id, end="kill")
    assert other.group(3) != player_id and other_seat != seat
    again, seat_again, status = seated_run(server, config, table.table_id, "--name", "Tess")
    assert (again.group(2), again.group(3)) == ("guest", player_id)
    assert seat_again == seat and status == 130
    assert json.loads(kept.read_text())["servers"][server.address]["player_id"] == player_id


def test_a_refused_guest_is_replaced_and_other_servers_entries_kept(
    server: ServerProcess, client: Client, tmp_path: Path
) -> None:
    config = tmp_path / "config"
    kept = identity_file(config)
    kept.parent.mkdir(parents=True)
    elsewhere = {"token": "e.f.g", "player_id": "guest:elsewhere", "name": "x"}
    kept.write_text(json.dumps({"servers": {
        server.address: {"token": "not.a.token", "player_id": "guest:gone", "name": "Old"},
        "other.example:50051": elsewhere}}))
    kept.chmod(0o644)
    table = client.create("dou_dizhu")
    who, _, status = seated_run(server, config, table.table_id, "--name", "Neu")
    assert who.group(2) == "a new guest" and who.group(3) != "guest:gone"
    assert status == 130
    data = json.loads(kept.read_text())["servers"]
    assert data[server.address]["player_id"] == who.group(3)
    assert data["other.example:50051"] == elsewhere
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600


@pytest.mark.parametrize("how", ["flag", "env"])
def test_a_providers_token_from_a_file_plays_as_that_player(
    server: ServerProcess, client: Client, provider_key: SigningKey, tmp_path: Path, how: str
) -> None:
    token_file = tmp_path / "id.token"
    token_file.write_text(provider_key.sign(claims(f"ada-{how}", "Ada")) + "\n")
    config = tmp_path / "config"
    table = client.create("dou_dizhu")
    if how == "flag":
        who, seat, _ = seated_run(server, config, table.table_id, "--identity-file",
                                  str(token_file))
    else:
        who, seat, _ = seated_run(server, config, table.table_id, end="kill",
                                  CROUPIER_IDENTITY_TOKEN_FILE=str(token_file))
        assert client.view(table.table_id).table.seats[seat].player_id == f"ada-{how}"
    assert who.groups() == ("Ada", "signed in", f"ada-{how}")
    assert not identity_file(config).exists()  # a provider's token is never kept
    # a token the server refuses stops the command: no guest in its place
    token_file.write_text(provider_key.sign(claims("ada", "Ada", lifetime=-3600)))
    child = spawn(server, config, "--table", table.table_id, "--identity-file", str(token_file))
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1
    assert "no player identity" in child.before and "expired" in child.before
    assert not identity_file(config).exists()


def test_without_guests_a_given_table_is_played_with_a_seat_token(tmp_path: Path) -> None:
    server = trusting_server(tmp_path / "noguests", "", "--guests", "off")
    try:
        c = Client(server.address)
        table = c.create("dou_dizhu")
        child = spawn(server, tmp_path / "config", "--table", table.table_id)
        child.expect("Playing without a player identity")
        child.expect(SEATED)
        child.sendline("quit")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 130
        assert not identity_file(tmp_path / "config").exists()
        # matchmaking needs a player: said plainly
        child = spawn(server, tmp_path / "config", "dou_dizhu")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 1 and "no player identity" in child.before
        c.close()
    finally:
        server.stop()


def test_play_flags_that_do_not_go_together_are_refused() -> None:
    env = child_env(XDG_CONFIG_HOME=os.devnull)
    for args, said in ((["--table", "t", "--bots", "easy"], "--table and --bots"),
                       (["dou_dizhu", "--rated", "--bots", "easy"], "--rated is for"),
                       (["dou_dizhu", "--seat", "1"], "--seat goes with --table"),
                       ([], "name a GAME")):
        child = pexpect.spawn(CROUPIER, ["play", *args], env=env, encoding="utf-8", timeout=30)
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 2 and said in child.before, (args, child.before)


def test_the_seat_shows_the_players_name(server: ServerProcess, client: Client,
                                         tmp_path: Path) -> None:
    table = client.create("dou_dizhu")
    who, seat, _ = seated_run(server, tmp_path / "c", table.table_id, "--name", "Quinn",
                              end="kill")
    info = client.view(table.table_id).table.seats[seat]
    assert (info.name, info.player_id) == ("Quinn", who.group(3))
    assert client.stub.GetView(pb.GetViewRequest(table_id=table.table_id),
                               timeout=10).table.seats[seat].occupied


def test_the_waiting_line_says_time_waited_players_found_and_when_bots_come() -> None:
    from clients.ticket_wait import waiting_line

    ticket = pb.Ticket(game="dou_dizhu", players=3, mode=pb.MATCH_MODE_QUICK,
                       status=pb.TICKET_STATUS_WAITING, waited_seconds=4.2, players_found=2,
                       bots_at=time.time() + 20.5)
    line = waiting_line(ticket, seen_at=100.0, now=103.0)  # 3 s since the server's news
    assert line.startswith("Waiting for a quick match of dou_dizhu: 7 s, 2 of 3 players found")
    assert re.search(r"bots fill the empty seats in (19|20) s\.$", line), line
    rated = pb.Ticket(game="dou_dizhu", players=3, mode=pb.MATCH_MODE_RATED, rating=21.37,
                      players_found=1)
    assert waiting_line(rated, 0.0, 0.0) == (
        "Waiting for a rated match of dou_dizhu: 0 s, 1 of 3 players found "
        "(your rating 21.4).")


# --- matchmaking ---------------------------------------------------------------------------


def matchmaking_on_server() -> bool:
    """Whether this checkout's server has matchmaking (its flags), for the tests below."""
    from service.config import ServeConfig

    return "match_bots_after" in {f.name for f in dataclasses.fields(ServeConfig)}


needs_matchmaking = pytest.mark.skipif(not matchmaking_on_server(),
                                       reason="the server has no matchmaking yet")


@needs_matchmaking
def test_play_game_is_matched_with_bots_and_played_to_the_end(tmp_path: Path) -> None:
    """`croupier play GAME`: a quick match ticket, the wait shown, bots in the seats nobody
    came for once the server's bot wait is over, then the match as ever, to its end."""
    server = trusting_server(tmp_path / "matched", "", "--match-bots-after", "1")
    bots = Bots(server.address, tmp_path / "bots.log")
    try:
        play = play_in_pty(server.address, "dou_dizhu", [], tmp_path / "play.txt",
                           lambda prompts, listed: "#1")
        text = play.text
        assert play.exitstatus == 0, text[-3000:]
        assert re.search(r"Waiting for a quick match of Dou Dizhu: \d+ s, 1 of 3 players "
                         r"found; bots (fill the empty seats in \d+ s|are taking)", text), text
        who = re.search(YOU_ARE, text)
        seated = re.search(SEATED, text)
        assert who and seated, text[:2000]
        c = Client(server.address)
        table = c.view(seated.group(1)).table
        c.close()
        seat = int(seated.group(2))
        assert table.seats[seat].player_id == who.group(3)  # the seat is the player's
        assert sum(s.is_bot for s in table.seats) == 2
        assert "Final scores" in text
    finally:
        bots.stop()
        server.stop()


@needs_matchmaking
def test_ctrl_c_while_waiting_cancels_the_ticket(tmp_path: Path) -> None:
    server = trusting_server(tmp_path / "waiting", "", "--match-bots-after", "600")
    config = tmp_path / "config"
    c = Client(server.address)
    try:
        child = spawn(server, config, "dou_dizhu", "--players", "3", "--rated")
        child.expect(r"Waiting for a rated match of Dou Dizhu: \d+ s, 1 of 3 players found")
        child.expect(r"Waiting for a rated match of Dou Dizhu: [1-9]\d* s")  # the time runs
        child.sendintr()
        child.expect("Stopped looking for a match \\(ticket cancelled\\)")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 130
        cancelled_at = time.time()
        token = json.loads(identity_file(config).read_text())["servers"][server.address]["token"]
        # the same player asking again gets a new ticket: the old one is not open any more
        again = c.stub.FindMatch(pb.FindMatchRequest(game="dou_dizhu", players=3,
                                                     mode=pb.MATCH_MODE_RATED),
                                 metadata=(("authorization", f"Bearer {token}"),), timeout=10)
        assert again.created_at >= cancelled_at - 0.5, (again.created_at, cancelled_at)
        c.stub.CancelTicket(pb.GetTicketRequest(ticket_id=again.ticket_id),
                            metadata=(("authorization", f"Bearer {token}"),), timeout=10)
    finally:
        c.close()
        server.stop()
