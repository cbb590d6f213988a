"""The bridge's program confined, and the bridge's key kept from it: the real `croupier
bot-bridge` against a real server with API keys and a real SQLite store.

A spying program, told where everything is (the key file, the store, the server's and the
bridge's process ids and port), tries to read the key (environment, file, the bridge's command
line), the store, every process's command line and the server's port, and reports what it got
on stderr, which the bridge logs. Confined, it gets none of them; unconfined (--no-sandbox),
the same program reads the store and the bridge's command line, which shows the spy works.
A program over its memory or CPU-time limit dies, and its decisions count as crashes in the
record and in the tournament's counts. A key the server refuses stops the bridge.

These tests need bubblewrap (Debian: bubblewrap) and a host where it can make namespaces; they
fail, not skip, where it cannot: confinement is the product's default.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from croupier.v1 import croupier_pb2 as pb

from bots.sandbox import Sandbox, SandboxError
from bots.tournament import stats
from tests.bridge_support import json_lines, wait_finished
from tests.support import CROUPIER, REPO, Client, ServerProcess

pytestmark = pytest.mark.e2e
TABLES_KEY = "tables-key-0123456789abcdef"
ALICE_KEY = "alice-key-5f3e9a7c1b2d4e6f"
OTHER_KEY = "other-key-0123456789abcdef"

# plays the first legal move (with id); at its start reports what it could reach as one
# "SPY {json}" line on stderr; `hog=memory|cpu` at its 2nd decision exhausts that resource
# (early in the table only, so that its next start plays on)
SPY = textwrap.dedent(
    """
    import json, os, socket, sys, time
    args = dict(a.split("=", 1) for a in sys.argv[1:])

    def readable(path):
        try:
            with open(path, "rb") as f:
                return f.read(1 << 16)
        except OSError:
            return None

    def spy():
        key = args["yek"][::-1]  # given reversed: its own command line does not hold the key
        seen = {"env": any(key in v for v in os.environ.values())}
        data = readable(args["keyfile"])
        seen["keyfile"] = data is not None
        seen["store"] = readable(args["store"]) is not None
        cmdlines = {}
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                line = readable(f"/proc/{pid}/cmdline")
                if line is not None:
                    cmdlines[pid] = line.replace(b"\\0", b" ").decode(errors="replace")
        seen["processes"] = len(cmdlines)
        seen["key_in_cmdline"] = any(key in c for c in cmdlines.values())
        seen["bridge_cmdline"] = any("bot-bridge" in c for c in cmdlines.values())
        seen["server_cmdline"] = any(" serve " in c for c in cmdlines.values())
        bridge = readable(args["pidfile"])
        for name, pid in (("server", args["server_pid"]),
                          ("bridge", bridge.decode().strip() if bridge else "")):
            seen[name + "_proc"] = bool(pid) and readable(f"/proc/{pid}/cmdline") is not None
        try:
            socket.create_connection(("127.0.0.1", int(args["port"])), timeout=2).close()
            seen["network"] = True
        except OSError:
            seen["network"] = False
        print("SPY " + json.dumps(seen), file=sys.stderr, flush=True)

    print(json.dumps({"hello": "croupier-bot/1", "name": "spy"}), flush=True)
    if "spy" in args:
        spy()
    n = 0
    for line in sys.stdin:
        m = json.loads(line)
        if m["type"] != "decide":
            continue
        n += 1
        early = int(m["version"]) < 12  # only early in the table: it then plays on
        if n == 2 and early and args.get("hog") == "memory":
            hog = bytearray(1 << 30)  # 1 GiB: over the limit, MemoryError, the program dies
        if n == 2 and early and args.get("hog") == "cpu":
            while True:
                pass
        print(json.dumps({"id": m["id"], "move": m["legal_moves"][0]}), flush=True)
    """
)


@pytest.fixture(scope="module")
def confinement() -> None:
    """bwrap must work here: the bridge confines by default, and CI installs it."""
    try:
        Sandbox().check()
    except SandboxError as e:
        pytest.fail(f"the bridge cannot confine programs on this host, so its default "
                    f"cannot be tested: {e}")


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server with API keys, its store in a folder of its own."""
    tmp = tmp_path_factory.mktemp("sandbox-server")
    (tmp / "keys").write_text(f"{TABLES_KEY} tables\n{ALICE_KEY} entrant:alice\n"
                              f"{OTHER_KEY} entrant:other\n")
    proc = ServerProcess(db=tmp / "store.db",
                         extra=("--api-keys", str(tmp / "keys"), "--fill-interval", "0.1")).start()
    yield proc
    proc.stop()


@pytest.fixture
def places(tmp_path: Path) -> dict[str, Path]:
    """The author's key file and the program, each in a folder of its own."""
    (tmp_path / "secret").mkdir()
    (tmp_path / "program").mkdir()
    key_file = tmp_path / "secret" / "alice.key"
    key_file.write_text(ALICE_KEY + "\n")
    program = tmp_path / "program" / "spy.py"
    program.write_text(SPY)
    return {"key_file": key_file, "program": program, "pid_file": tmp_path / "program" / "pid",
            "log": tmp_path / "bridge.jsonl"}


def alice_tables(server: ServerProcess, count: int = 1, **options: Any) -> list[str]:
    client = Client(server.address)
    try:
        spec = pb.SeatSpec(kind=pb.SEAT_KIND_BOT, entrant="alice")
        request = pb.CreateTableRequest(game="dou_dizhu", seats=[spec] * 3)
        request.options.update(options)
        return [client.stub.CreateTable(request, metadata=[("x-api-key", TABLES_KEY)],
                                        timeout=10).table_id for _ in range(count)]
    finally:
        client.close()


def bridge(server: ServerProcess, places: dict[str, Path], program_args: list[str],
           *options: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """`croupier bot-bridge` for alice, its key in a file, running the spy with its args."""
    process = subprocess.Popen(
        [*CROUPIER, "bot-bridge", "--entrant", "alice", "--server", server.address,
         "--key-file", str(places["key_file"]), "--poll", "0.2", "--log-file",
         str(places["log"]), "--log-level", "warning", *options, "--",
         sys.executable, str(places["program"]), *program_args],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )
    places["pid_file"].write_text(str(process.pid))
    return process


def stop(process: subprocess.Popen[bytes]) -> str:
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 0, err.decode(errors="replace")[-2000:]
    return err.decode(errors="replace")


def spy_args(server: ServerProcess, places: dict[str, Path]) -> list[str]:
    assert server.proc is not None
    return ["spy=1", f"yek={ALICE_KEY[::-1]}", f"keyfile={places['key_file']}",
            f"store={server.db}", f"server_pid={server.proc.pid}",
            f"pidfile={places['pid_file']}", f"port={server.port}"]


def reports(log: Path) -> list[dict[str, Any]]:
    lines = [e["line"] for e in json_lines(log) if e.get("event") == "program_stderr"]
    return [json.loads(line[4:]) for line in lines if line.startswith("SPY ")]


def fallbacks(server: ServerProcess, table_id: str) -> tuple[list[str], tuple[stats.SeatStats, ...]]:
    client = Client(server.address)
    try:
        record = client.stub.ExportRecord(pb.ExportRecordRequest(table_id=table_id), timeout=10)
    finally:
        client.close()
    return [m.fallback for m in record.moves], stats.of_record(record)


def test_a_confined_program_reaches_no_key_no_store_no_other_process_and_no_network(
    confinement: None, keyed: ServerProcess, places: dict[str, Path],
) -> None:
    process = bridge(keyed, places, spy_args(keyed, places))
    try:
        [table_id] = alice_tables(keyed)
        wait_finished(keyed.address, [table_id])
    finally:
        stop(process)
    seen = reports(places["log"])
    assert len(seen) == 3  # one program per seat, each confined
    for report in seen:
        assert report == {
            "env": False, "keyfile": False, "store": False, "processes": report["processes"],
            "key_in_cmdline": False, "bridge_cmdline": False, "server_cmdline": False,
            "server_proc": False, "bridge_proc": False, "network": False,
        }, report
        assert report["processes"] <= 2  # itself and the sandbox's init
    moves, _ = fallbacks(keyed, table_id)
    assert set(moves) == {""}  # and it played every move itself
    events = json_lines(places["log"])
    assert [e for e in events if e.get("event") == "sandbox_on"]
    assert ALICE_KEY not in places["log"].read_text()


def test_unconfined_the_same_program_reads_the_store_and_the_bridges_command_line(
    confinement: None, keyed: ServerProcess, places: dict[str, Path],
) -> None:
    """The spy's control: with --no-sandbox (and a warning) it gets what it looks for."""
    process = bridge(keyed, places, spy_args(keyed, places), "--no-sandbox")
    try:
        [table_id] = alice_tables(keyed)
        wait_finished(keyed.address, [table_id])
    finally:
        stop(process)
    seen = reports(places["log"])
    assert seen and all(r["store"] and r["keyfile"] and r["bridge_proc"] and r["network"]
                        for r in seen), seen
    assert all(r["bridge_cmdline"] and not r["key_in_cmdline"] for r in seen), seen
    warned = [e for e in json_lines(places["log"]) if e.get("event") == "sandbox_off"]
    assert warned and warned[0]["level"] == "warning"


@pytest.mark.parametrize(("hog", "limits"), [
    ("memory", ["--memory-mb", "256"]),
    ("cpu", ["--cpu-seconds", "1"]),
])
def test_a_program_over_its_limit_is_stopped_and_counted_crashed(
    confinement: None, keyed: ServerProcess, places: dict[str, Path], hog: str,
    limits: list[str],
) -> None:
    process = bridge(keyed, places, [f"hog={hog}"], *limits)
    try:
        [table_id] = alice_tables(keyed, turn_seconds=10)
        wait_finished(keyed.address, [table_id], timeout=90)
    finally:
        stop(process)
    moves, per_seat = fallbacks(keyed, table_id)
    # each seat's program answers once, then dies at its 2nd decision
    assert set(moves) == {"", "crashed"}
    assert all(seat.crashes >= 1 for seat in per_seat), per_seat
    assert sum(seat.crashes for seat in per_seat) == moves.count("crashed")
    events = json_lines(places["log"])
    crashed = [e for e in events if e.get("event") == "program_crashed"]
    assert len(crashed) >= 3
    stderr = " ".join(e["line"] for e in events if e.get("event") == "program_stderr")
    if hog == "memory":
        assert "MemoryError" in stderr
    else:  # the kernel's SIGXCPU (or its SIGKILL past the hard limit): no exit code of its own
        assert all(e["code"] != 0 for e in crashed), crashed


def test_the_key_is_never_taken_from_the_command_line(keyed: ServerProcess) -> None:
    for flag in ("--key", "--api-key"):
        done = subprocess.run(
            [*CROUPIER, "bot-bridge", "--entrant", "alice", "--server", keyed.address, flag,
             ALICE_KEY, "--", sys.executable, "-c", "pass"],
            cwd=REPO, capture_output=True, timeout=30)
        err = done.stderr.decode()
        assert done.returncode == 2
        assert "CROUPIER_API_KEY" in err and "--key-file" in err and ALICE_KEY not in err
    for command in (["bots"], ["tournament", "dou_dizhu", "--out", "x"],
                    ["ladder", "dou_dizhu"], ["play", "dou_dizhu"]):
        done = subprocess.run([*CROUPIER, *command, "--api-key", ALICE_KEY], cwd=REPO,
                              capture_output=True, timeout=30)
        err = done.stderr.decode()
        assert done.returncode == 2, (command, err)
        assert "--key-file" in err and ALICE_KEY not in err, (command, err)


def test_a_key_file_the_program_could_read_is_refused(
    keyed: ServerProcess, places: dict[str, Path],
) -> None:
    inside = places["program"].parent / "alice.key"
    inside.write_text(ALICE_KEY)
    done = subprocess.run(
        [*CROUPIER, "bot-bridge", "--entrant", "alice", "--server", keyed.address,
         "--key-file", str(inside), "--", sys.executable, str(places["program"])],
        cwd=REPO, capture_output=True, timeout=30)
    assert done.returncode == 2
    assert "may read it" in done.stderr.decode()


@pytest.mark.parametrize(("env", "code"), [
    ({"CROUPIER_API_KEY": OTHER_KEY}, "PERMISSION_DENIED"),
    ({}, "UNAUTHENTICATED"),
])
def test_a_bridge_whose_key_is_refused_stops_and_says_why(
    confinement: None, keyed: ServerProcess, places: dict[str, Path], env: dict[str, str],
    code: str,
) -> None:
    [table_id] = alice_tables(keyed)
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("CROUPIER_API_KEY", "CROUPIER_API_KEY_FILE")}
    started = time.monotonic()
    done = subprocess.run(
        [*CROUPIER, "bot-bridge", "--entrant", "alice", "--server", keyed.address, "--poll",
         "0.2", "--", sys.executable, str(places["program"])],
        cwd=REPO, capture_output=True, timeout=60, env={**environment, **env})
    err = done.stderr.decode()
    assert done.returncode == 3, err[-2000:]
    assert code in err and "entrant:alice" in err and "stopping after 3 refusals" in err
    assert OTHER_KEY not in err
    assert time.monotonic() - started < 30
    # the seats are still free for the right key
    client = Client(keyed.address)
    try:
        view = client.stub.GetView(pb.GetViewRequest(table_id=table_id), timeout=10)
    finally:
        client.close()
    assert not any(s.occupied for s in view.table.seats)
