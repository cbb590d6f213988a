"""Credentials never reach a log or a screen: a store URL's password, an API key, a TLS key's
contents. Real server processes (the real Redis, which takes a password it does not require)
whose whole stderr and --log-file are searched, `croupier run`'s children's command lines,
`--help`, and a server that cannot start because of its store URL."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from croupier.v1 import croupier_pb2 as pb

from common.logging import scrub
from common.masking import masked
from tests.bot_support import child_env
from tests.store_support import redis_cleanup, redis_prefix
from tests.support import CROUPIER, REPO, Client, ServerProcess, free_port, rpc_code, wait_serving

pytestmark = pytest.mark.e2e
PASSWORD = "pw-Zq8vN3kT1xR7"  # Redis without requirepass accepts any AUTH password
API_KEY = "key-Hm4Pw9cQ2sJ6uL0e"
WRONG_KEY = "key-Wr0ngWr0ngWr0ng"


@pytest.mark.parametrize(
    ("shown", "expected"),
    [
        ("redis://:PW@h:6379/0", "redis://:***@h:6379/0"),
        ("rediss://ann:PW@h/0?prefix=x&retention=5", "rediss://ann:***@h/0?prefix=x&retention=5"),
        ("unix://:PW@/run/redis.sock?db=0", "unix://:***@/run/redis.sock?db=0"),
        ("unix:///run/redis.sock?password=PW&db=1", "unix:///run/redis.sock?password=***&db=1"),
        ("redis+sentinel://:PW@a:26379,b:26379/m", "redis+sentinel://:***@a:26379,b:26379/m"),
        ("redis://:P@W@h/0", "redis://:***@h/0"),  # an '@' in the password, unescaped
        ("redis://PW@h/0", "redis://***@h/0"),  # a password without its colon
        ("cannot reach 'redis://u:PW@h/0' now", "cannot reach 'redis://u:***@h/0' now"),
        ("sqlite:./var/croupier.db", "sqlite:./var/croupier.db"),
        ("127.0.0.1:50051", "127.0.0.1:50051"),
    ],
)
def test_masked_hides_credentials_and_keeps_the_rest(shown: str, expected: str) -> None:
    assert masked(shown) == expected


def test_exception_texts_are_masked() -> None:
    assert scrub("Error connecting to redis://:PW@h/0") == "Error connecting to redis://:***@h/0"


@pytest.fixture
def redis_with_password() -> Iterator[str]:
    prefix = redis_prefix()
    yield f"redis://:{PASSWORD}@127.0.0.1:6379/0?prefix={prefix}"
    redis_cleanup(prefix)


def _everything(server: ServerProcess, log_file: Path) -> str:
    return server.log_text() + log_file.read_text()


def test_a_server_logs_no_store_password_nor_api_key(
    tmp_path: Path, redis_with_password: str
) -> None:
    """The `serving` event names the store with its password masked; nothing the server
    writes (stderr at debug, the log file) holds the password or a key a client sent, right
    or wrong."""
    keys = tmp_path / "keys"
    keys.write_text(f"{API_KEY} tables,bots\n")
    log_file = tmp_path / "all.jsonl"
    server = ServerProcess(
        tmp_path / "s.db", store=redis_with_password,
        extra=("--log-level", "debug", "--log-file", str(log_file), "--api-keys", str(keys)),
    ).start()
    client = Client(server.address)
    try:
        right = (("x-api-key", API_KEY),)
        table = client.stub.CreateTable(pb.CreateTableRequest(game="dou_dizhu"), metadata=right,
                                        timeout=10)
        client.join(table.table_id, name="ann")
        code, _ = rpc_code(client.stub.CreateTable, pb.CreateTableRequest(game="dou_dizhu"),
                           metadata=(("x-api-key", WRONG_KEY),), timeout=10)
        assert code == grpc.StatusCode.PERMISSION_DENIED
        client.stub.ListTables(pb.ListTablesRequest(), metadata=right, timeout=10)
    finally:
        client.close()
        assert server.stop() == 0
    text = _everything(server, log_file)
    assert "redis://:***@127.0.0.1:6379/0?prefix=" in text  # the serving event, masked
    for secret in (PASSWORD, API_KEY, WRONG_KEY):
        assert secret not in text, secret


@pytest.mark.parametrize(("url", "quoted"), [
    ("mongodb://:{}@127.0.0.1:27017/0", "unknown store 'mongodb://:***@127.0.0.1:27017/0'"),
    # a Sentinel URL without the primary's service name
    ("redis+sentinel://:{}@127.0.0.1:26379", "not 'redis+sentinel://:***@127.0.0.1:26379'"),
])
def test_a_store_url_a_server_refuses_is_quoted_masked(
    tmp_path: Path, url: str, quoted: str
) -> None:
    log_file = tmp_path / "all.jsonl"
    done = subprocess.run(
        [*CROUPIER, "serve", "--listen", f"127.0.0.1:{free_port()}", "--store",
         url.format(PASSWORD), "--log-file", str(log_file)],
        cwd=REPO, capture_output=True, text=True, timeout=60, env=child_env(),
    )
    assert done.returncode == 1
    assert quoted in done.stderr
    assert PASSWORD not in done.stderr + done.stdout + log_file.read_text()


def test_a_tls_key_is_never_quoted(tmp_path: Path) -> None:
    """A key file that is not a key: the server refuses to start and says so without its
    contents."""
    marker = "TopSecretKeyMaterial0123456789"
    pem = f"-----BEGIN PRIVATE KEY-----\n{marker}\n-----END PRIVATE KEY-----\n"
    for name in ("cert.pem", "key.pem"):
        (tmp_path / name).write_text(pem)
    done = subprocess.run(
        [*CROUPIER, "serve", "--listen", f"127.0.0.1:{free_port()}", "--store", "memory",
         "--tls-cert", str(tmp_path / "cert.pem"), "--tls-key", str(tmp_path / "key.pem")],
        cwd=REPO, capture_output=True, text=True, timeout=60, env=child_env(),
    )
    assert done.returncode == 1
    assert marker not in done.stderr + done.stdout


def test_help_shows_the_store_setting_masked() -> None:
    done = subprocess.run(
        [*CROUPIER, "serve", "--help"], cwd=REPO, capture_output=True, text=True, timeout=60,
        env=child_env(CROUPIER_STORE=f"redis://:{PASSWORD}@db.example:6379/0"),
    )
    assert done.returncode == 0, done.stderr
    assert PASSWORD not in done.stdout
    assert "redis://:***@db.example:6379/0" in " ".join(done.stdout.split())


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def test_croupier_run_keeps_the_store_password_off_command_lines_and_logs(
    tmp_path: Path, redis_with_password: str
) -> None:
    """`croupier run` hands the store to its server through the environment: `ps` shows no
    password, and neither its console nor the log file does."""
    port = free_port()
    log_file = tmp_path / "all.jsonl"
    out = (tmp_path / "run.out").open("w")
    run = subprocess.Popen(
        [*CROUPIER, "run", "--listen", f"127.0.0.1:{port}", "--web-listen", "",
         "--log-file", str(log_file)],
        cwd=REPO, stdout=out, stderr=subprocess.STDOUT,
        env=child_env(CROUPIER_STORE=redis_with_password, PYTHONUNBUFFERED="1"),
    )
    try:
        wait_serving(f"127.0.0.1:{port}", proc=run)
        deadline = time.monotonic() + 30
        while len(_children(run.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)  # the bot worker starts after the server answers
        children = _children(run.pid)
        assert len(children) == 2, children
        for pid in children:
            assert PASSWORD not in Path(f"/proc/{pid}/cmdline").read_bytes().decode()
    finally:
        run.send_signal(signal.SIGTERM)
        run.wait(90)
        out.close()
    text = (tmp_path / "run.out").read_text() + log_file.read_text()
    assert "redis://:***@127.0.0.1:6379/0" in text
    assert PASSWORD not in text
