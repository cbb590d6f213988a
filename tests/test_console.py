"""What the server, `croupier run` and the bots write: on a terminal, a quiet readable console
(start, stop, warnings, a line per table created and finished); elsewhere, JSON lines and
nothing else, even when other libraries log or raise, and even under malformed web input;
with --log-file, every event as JSON; a port in use named with the setting that moves it."""

from __future__ import annotations

import json
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import h2.config
import h2.connection
import pexpect
import pytest
from croupier.v1 import croupier_pb2 as pb

from tests.bot_support import (
    CROUPIER,
    bot_seats,
    child_env,
    create_table,
    events_to_end,
    stub_for,
)
from tests.support import REPO, Client, ServerProcess, free_port

pytestmark = pytest.mark.e2e

API = "/croupier.v1.Croupier/"
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
FUZZ_CASES = 160  # connections, each at most a fraction of a second


def json_lines(text: str) -> list[dict[str, Any]]:
    """Every line as a JSON object; fails on the first line that is not one."""
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        try:
            entry = json.loads(line)
        except ValueError:
            raise AssertionError(f"line {number} is not JSON: {line[:300]!r}") from None
        assert isinstance(entry, dict), line
        out.append(entry)
    return out


# --- malformed input for the web port -----------------------------------------------------


def _noise(rng: random.Random, low: int = 1, high: int = 400) -> bytes:
    return rng.randbytes(rng.randint(low, high))


def _http1(rng: random.Random) -> bytes:
    method = rng.choice([b"GET", b"POST", b"OPTIONS", b"BREW", b"G\x00T"])
    path = rng.choice([
        b"/", b"/%00", b"/\xff\xfe", b"/../../etc/passwd", b"/" + b"a" * 9000,
        API.encode() + b"Ping", API.encode() + b"StreamTable", API.encode() + b"Nope",
        API.encode() + b"Ping?encoding=proto&message=%%%&base64=1",
        API.encode() + b"GetView?connect=v1&encoding=json&message=%7B",
    ])
    headers = rng.sample([
        b"Host: x", b"Bad Header Line", b"Content-Length: -4", b"Content-Length: 99999999",
        b"Transfer-Encoding: chunked", b"Content-Type: application/proto",
        b"Content-Type: application/connect+json", b"Content-Type: application/grpc-web+proto",
        b"Connect-Timeout-Ms: soon", b"Content-Encoding: gzip", b"Connect-Content-Encoding: br",
        b"Authorization: Bearer not-a-token", b"X-" + b"h" * 20000 + b": 1",
    ], rng.randint(1, 5))
    body = rng.choice([b"", b"zz\r\n", b"{{{{", b"\x00\xff\xff\xff\xffabc", _noise(rng, 1, 64)])
    request = method + b" " + path + b" HTTP/1.1\r\n" + b"\r\n".join(headers) + b"\r\n\r\n" + body
    return request[: rng.randint(len(request) // 2, len(request))]  # often cut short


def _http2(rng: random.Random) -> bytes:
    conn = h2.connection.H2Connection(
        h2.config.H2Configuration(
            client_side=True,
            header_encoding=None,
            validate_outbound_headers=False,
            normalize_outbound_headers=False,
            validate_inbound_headers=False,
        )
    )
    conn.initiate_connection()
    path = rng.choice([
        b"/", b"/\xff\xfe", b"/%00", API.encode() + b"Ping", API.encode() + b"Ping\xff",
        API.encode() + b"StreamTable", API.encode() + b"SubmitMove?x=\xff",
    ])
    kind = rng.choice([b"application/grpc", b"application/proto", b"application/connect+proto",
                       b"application/grpc-web", b"text/plain"])
    headers = [(b":method", rng.choice([b"POST", b"GET", b"\x00"])), (b":path", path),
               (b":scheme", b"http"), (b":authority", b"x"), (b"content-type", kind)]
    if rng.random() < 0.5:
        headers.append(rng.choice([(b"grpc-timeout", b"zzz"), (b"grpc-encoding", b"gzip"),
                                   (b"content-length", b"-1"), (b"\xffbad", b"\x00\x01"),
                                   (b"te", b"gzip"), (b"connection", b"close")]))
    body = rng.choice([b"", b"\x00\x00\x00\x00\x03abc", b"\x01\x00\x00\x00\x04abcd",
                       b"\x00\x00\x00\x10\x03ab", _noise(rng, 1, 64)])
    conn.send_headers(1, headers, end_stream=not body)
    if body:
        conn.send_data(1, body, end_stream=rng.random() < 0.7)
    frames = conn.data_to_send()
    choice = rng.random()
    if choice < 0.3:  # truncated frames
        return frames[: rng.randint(len(PREFACE), len(frames))]
    if choice < 0.45:  # flipped bytes after the preface
        data = bytearray(frames)
        for _ in range(rng.randint(1, 6)):
            data[rng.randrange(len(PREFACE), len(data))] = rng.randrange(256)
        return bytes(data)
    if choice < 0.55:  # a frame header announcing more than follows
        return PREFACE + b"\x00\xff\xff\x01\x05\x00\x00\x00\x01" + _noise(rng, 1, 32)
    return frames


def _send(port: int, data: bytes) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
        try:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
            while s.recv(65536):
                pass
        except OSError:  # reset or timed out: the server may drop such a client
            pass


def fuzz_web_port(port: int, cases: int, seed: int = 28) -> None:
    rng = random.Random(seed)
    makers: list[Callable[[random.Random], bytes]] = [_noise, _http1, _http2]
    payloads = [makers[i % len(makers)](rng) for i in range(cases)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda data: _send(port, data), payloads))


def test_server_log_stays_json_lines_under_malformed_web_input(tmp_path: Path) -> None:
    """stdout not a terminal: every line the server writes is one JSON object, whatever
    hypercorn, h2 or asyncio make of the garbage; at info, each RPC and each table created
    and closed still has its line (what operators read)."""
    server = ServerProcess(
        db=tmp_path / "c.db",
        web_port=free_port(),
        extra=("--fill-interval", "0.1", "--abandon-waiting-after", "1"),
    ).start()
    client = Client(server.address)
    try:
        table = client.create()  # nobody comes: closed as abandoned after a second
        fuzz_web_port(server.web_port, FUZZ_CASES)
        assert client.stub.Ping(pb.PingRequest(payload=b"ok"), timeout=10).payload == b"ok"
        deadline = time.monotonic() + 30
        while '"table_abandoned"' not in server.log_text():
            assert time.monotonic() < deadline, "the table was never closed as abandoned"
            time.sleep(0.1)
    finally:
        client.close()
        code = server.stop()
    assert code == 0, server.log_text()[-3000:]
    lines = json_lines(server.log_text())
    events = [line["event"] for line in lines]
    assert "serving" in events and "stopped" in events
    assert any(line.get("method") == "CreateTable" and line.get("table") == table.table_id
               for line in lines)
    for event in ("table_created", "table_abandoned"):
        assert any(line["event"] == event and line.get("table") == table.table_id
                   for line in lines), event
    for line in lines:
        if "exception" in line:  # a traceback is a field of its event, never lines of its own
            assert isinstance(line["exception"], list) and line["exception"], line


# --- other libraries' records, warnings, uncaught exceptions ------------------------------

ROUTED = textwrap.dedent(
    """
    import asyncio, gc, logging, threading, warnings
    from common import logging as service_logging

    service_logging.configure("info")
    warnings.warn("an old way of doing it", UserWarning)
    try:
        raise ValueError("bad frame: authorization: Bearer s3cr3t-t0ken-value")
    except ValueError:
        logging.getLogger("h2.connection").exception("frame\\nrejected")
    logging.getLogger("hypercorn.error").info("Running on somewhere")  # below warning: dropped
    thread = threading.Thread(target=lambda: 1 / 0, name="sidekick")
    thread.start()
    thread.join()

    async def main():
        async def fail():
            raise RuntimeError("nobody awaited me")
        task = asyncio.ensure_future(fail())
        await asyncio.sleep(0.05)
        del task
        gc.collect()

    asyncio.run(main())

    class Broken:
        def __del__(self):
            raise KeyError("in a finalizer")

    Broken()
    gc.collect()
    raise SystemError("nobody caught this")
    """
)


def test_foreign_records_warnings_and_uncaught_exceptions_are_json_events() -> None:
    """A real process with stderr a pipe: each of these is exactly one JSON line, the
    traceback inside it, the bearer token masked."""
    done = subprocess.run(
        [sys.executable, "-c", ROUTED], cwd=REPO, capture_output=True, text=True, timeout=60,
        env=child_env(),
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    lines = json_lines(done.stderr)
    by_logger = {line.get("logger"): line for line in lines}
    by_event = {line["event"]: line for line in lines}
    assert "an old way of doing it" in by_logger["py.warnings"]["event"]
    h2_line = by_logger["h2.connection"]
    assert h2_line["event"] == "frame\nrejected" and h2_line["level"] == "error"
    assert h2_line["exception"][0]["exc_type"] == "ValueError"
    assert "s3cr3t" not in done.stderr and "[redacted]" in h2_line["exception"][0]["exc_value"]
    assert "hypercorn.error" not in by_logger  # other libraries' info is their chatter
    assert by_event["thread_exception"]["thread"] == "sidekick"
    assert by_event["thread_exception"]["exception"][0]["exc_type"] == "ZeroDivisionError"
    never = by_logger["asyncio"]
    assert never["event"].startswith("Task exception was never retrieved")
    assert never["exception"][0]["exc_value"] == "nobody awaited me"
    assert by_event["unraisable_exception"]["exception"][0]["exc_type"] == "KeyError"
    assert by_event["uncaught_exception"]["exception"][0]["exc_type"] == "SystemError"
    assert len(lines) == 6, [line["event"] for line in lines]


# --- the terminal ---------------------------------------------------------------------------


def test_terminal_console_shows_the_tables_not_each_call(tmp_path: Path) -> None:
    """`croupier run` on a terminal at the default level: the banner once both ports listen,
    a line per table created and finished, and no line per RPC or bot decision; those go to
    the --log-file, which holds every event, debug included, as JSON lines. Ctrl-C stops."""
    port, web = free_port(), free_port()
    address = f"127.0.0.1:{port}"
    log_file = tmp_path / "all.jsonl"
    child = pexpect.spawn(
        CROUPIER,
        ["run", "--listen", address, "--store", f"sqlite:{tmp_path / 'c.db'}", "--web-listen",
         f"127.0.0.1:{web}", "--log-file", str(log_file)],
        env=child_env(NO_COLOR="1", TERM="xterm"),
        encoding="utf-8",
        timeout=60,
        dimensions=(50, 200),
        cwd=str(REPO),
    )
    transcript = (tmp_path / "console.txt").open("w")
    child.logfile_read = transcript
    try:
        child.expect(r"In a browser: http://127\.0\.0\.1:\d+/")
        with socket.create_connection(("127.0.0.1", web), timeout=5):
            pass  # the banner came once the web port listened too
        channel, stub = stub_for(address)
        with channel, ThreadPoolExecutor(max_workers=1) as pool:
            table_id = create_table(stub, bot_seats(3))
            # followed to its end on a thread, while this one keeps reading the terminal
            events = pool.submit(events_to_end, stub, table_id)
            child.expect(rf"table_finished .*table={table_id}")
            assert events.result(timeout=60)[-1].kind == pb.EVENT_KIND_END
        time.sleep(0.5)  # the bot worker's last words, if any, before Ctrl-C
        child.sendintr()
        child.expect(pexpect.EOF, timeout=90)
    finally:
        if child.isalive():
            child.kill(signal.SIGKILL)
        child.close()
        transcript.close()
    text = re.sub(r"\x1b\[[0-9;]*m", "", (tmp_path / "console.txt").read_text())
    assert child.exitstatus == 0, text[-3000:]
    assert "Croupier is serving on" in text
    # the banner's command runs as written: `croupier` if it is on the PATH, else its path
    command = re.findall(r"Croupier is serving on \S+ in another terminal: (\S+) play", text)[0]
    assert shutil.which(command, path=child_env()["PATH"]) or (REPO / command).is_file(), command
    assert re.search(rf"table_created .*table={table_id}", text), text
    for detail in ("rpc", "decision", "seat_claimed"):
        assert not re.search(rf"\] {detail} ", text), f"{detail} lines on the console:\n{text}"
    assert "child_stopped" in text  # and stop
    everything = json_lines(log_file.read_text())
    seen = {(line["event"], line["level"]) for line in everything}
    for wanted in [("rpc", "info"), ("rpc", "debug"), ("decision", "info"),
                   ("table_created", "info"), ("table_finished", "info"), ("serving", "info"),
                   ("worker_started", "info"), ("child_stopped", "info")]:
        assert wanted in seen, (wanted, sorted(seen))


# --- a port in use -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "flag", "setting"),
    [
        ("serve", "--listen", "CROUPIER_LISTEN"),
        ("serve", "--web-listen", "CROUPIER_WEB_LISTEN"),
        ("serve", "--metrics-port", "CROUPIER_METRICS_PORT"),
        ("run", "--listen", "CROUPIER_LISTEN"),
    ],
)
def test_a_port_in_use_names_the_setting_to_change(command: str, flag: str, setting: str) -> None:
    """Exit code 1, JSON lines only (no traceback, no gRPC C-core line), and the reason says
    which address is taken and which flag or variable chooses another."""
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        ports = {"--listen": f"127.0.0.1:{free_port()}", "--web-listen": f"127.0.0.1:{free_port()}"}
        ports[flag] = str(port) if flag == "--metrics-port" else f"127.0.0.1:{port}"
        argv = [CROUPIER, command, "--store", "memory"]
        for name, value in ports.items():
            argv += [name, value]
        if flag == "--metrics-port":
            argv += [flag, ports[flag]]
        done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=60,
                              env=child_env())
    assert done.returncode == 1, done.stderr
    lines = json_lines(done.stderr)
    reasons = [line["reason"] for line in lines if line["event"] == "cannot_serve"]
    label = {"--listen": "gRPC", "--web-listen": "web", "--metrics-port": "metrics"}[flag]
    assert reasons == [
        f"cannot listen on 127.0.0.1:{port} ({label}): it is in use; choose another with "
        f"{flag} or {setting}"
    ], done.stderr


def test_a_second_croupier_run_on_the_same_ports_says_so_and_starts_nothing(
    tmp_path: Path,
) -> None:
    """The first `croupier run` answers the second's address: the second must not take that
    for its own server (no banner, no bot worker); it exits 1 with the port's setting."""
    address, web = f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"
    argv = [CROUPIER, "run", "--listen", address, "--web-listen", web, "--store"]
    out = (tmp_path / "first.out").open("w")
    first = subprocess.Popen([*argv, f"sqlite:{tmp_path / 'first.db'}"], cwd=REPO,
                             stdout=out, stderr=subprocess.STDOUT, env=child_env())
    try:
        deadline = time.monotonic() + 60
        while "In a browser" not in (tmp_path / "first.out").read_text():
            assert first.poll() is None and time.monotonic() < deadline, (
                (tmp_path / "first.out").read_text())
            time.sleep(0.1)
        second = subprocess.run([*argv, f"sqlite:{tmp_path / 'second.db'}"], cwd=REPO,
                                capture_output=True, text=True, timeout=60, env=child_env())
        assert first.poll() is None  # the first one runs on, untouched
    finally:
        first.send_signal(signal.SIGTERM)
        first.wait(90)
        out.close()
    assert second.returncode == 1, second.stderr
    assert second.stdout == "", second.stdout  # no "Croupier is serving on ..."
    events = [line["event"] for line in json_lines(second.stderr)]
    assert "supervisor_started" not in events and "worker_started" not in events, events
    reasons = [line["reason"] for line in json_lines(second.stderr)
               if line["event"] == "cannot_serve"]
    assert reasons == [f"cannot listen on {address} (gRPC): it is in use; choose another with "
                       "--listen or CROUPIER_LISTEN"], second.stderr


def test_a_bot_metrics_port_in_use_names_its_setting() -> None:
    with socket.create_server(("0.0.0.0", 0)) as taken:
        port = taken.getsockname()[1]
        done = subprocess.run(
            [CROUPIER, "bots", "--server", f"127.0.0.1:{free_port()}", "--metrics-port",
             str(port)],
            cwd=REPO, capture_output=True, text=True, timeout=60, env=child_env(),
        )
    assert done.returncode == 1, done.stderr
    [line] = json_lines(done.stderr)
    assert line["reason"] == (
        f"cannot listen on port {port} (bot metrics): it is in use; choose another with "
        "--metrics-port or CROUPIER_BOT_METRICS_PORT"
    )


def test_library_texts_lose_bytes_literals_and_tokens() -> None:
    """Libraries quote what a client sent as bytes (hypercorn: the first bytes of an HTTP/2
    connection, whose header block may hold a seat token): such quotes are left out."""
    from common.logging import scrub

    sent = "b'PRI * HTTP/2.0\\r\\n\\r\\nSM\\x83\\x86 authorization: tok'"
    assert scrub(f"H2ProtocolAssumedError: {sent}") == (
        f"H2ProtocolAssumedError: [{len(sent)} characters of bytes]")
    assert scrub("Authorization: Bearer abc.def") == "Authorization: Bearer [redacted]"
    assert scrub("the verb's 'quoted' words stay") == "the verb's 'quoted' words stay"
