"""Security over real gRPC: seat tokens, API keys, TLS and mutual TLS (with a CA made here with
`cryptography`), and private tables that refuse spectators. Real server and bot processes."""

from __future__ import annotations

import base64
import datetime
import ipaddress
import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from croupier.v1 import croupier_pb2 as pb
from croupier.v1 import croupier_pb2_grpc as pb_grpc
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from google.protobuf import struct_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc

from service.security import ApiKeys
from tests.bot_support import CROUPIER, Proc, child_env
from tests.support import CROUPIER as SERVE
from tests.support import REPO, Client, ServerProcess, bearer, free_port, rpc_code

C = grpc.StatusCode
pytestmark = pytest.mark.e2e
TABLES_KEY = "tables-key-0123456789abcdef"
BOTS_KEY = "bots-key-0123456789abcdef"


# --- tokens and private tables (the shared session server) ------------------------------
def test_seat_tokens_are_long_random_and_never_logged(server: ServerProcess,
                                                      client: Client) -> None:
    tid = client.seated_table()
    tokens = list(client.tokens.values())
    for token in tokens:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        assert len(raw) * 8 >= 128
    assert len(set(tokens)) == len(tokens)
    client.view(tid, 0)
    log = server.db.with_suffix(".log").read_text()
    assert all(t not in log for t in tokens)


def test_private_tables_refuse_spectators(server: ServerProcess, client: Client) -> None:
    options = struct_pb2.Struct()
    options.update({"private": True, "deals": 1})
    table = client.create(options=options)
    tid = table.table_id
    assert table.options["private"] is True
    client.join(tid, name="ann")
    for call in (lambda: client.view(tid), lambda: next(iter(client.stream(tid)))):
        code, msg = rpc_code(call)
        assert code == C.PERMISSION_DENIED and "private" in msg
    mine = client.view(tid, 0)  # the seat holder is let in: nothing is dealt yet
    assert mine.seat == 0 and not mine.view.dou_dizhu.hand
    assert next(iter(client.stream(tid, seat=0))).version == 1
    client.join(tid, name="bob")
    client.join(tid, name="cy")
    assert client.view(tid, 0).view.dou_dizhu.hand  # the seat holder sees its seat
    options.update({"private": "yes"})
    code, msg = rpc_code(client.create, options=options)
    assert code == C.INVALID_ARGUMENT and "private" in msg


def test_key_files_are_checked(tmp_path: Path) -> None:
    path = tmp_path / "keys"
    path.write_text(f"# comment\n{TABLES_KEY} tables\n\n{BOTS_KEY}\n")
    keys = ApiKeys.load(str(path))
    assert keys.roles(TABLES_KEY) == {"tables"} and keys.roles(BOTS_KEY) == {"tables", "bots"}
    assert keys.roles("nope") == frozenset() and keys.roles(None) == frozenset()
    path.write_text(f"{TABLES_KEY} admin\n")
    with pytest.raises(ValueError, match="unknown role"):
        ApiKeys.load(str(path))
    path.write_text("short\n")
    with pytest.raises(ValueError, match="at least"):
        ApiKeys.load(str(path))


# --- API keys ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    tmp = tmp_path_factory.mktemp("keys")
    (tmp / "keys").write_text(f"{TABLES_KEY} tables\n{BOTS_KEY} bots\n")
    proc = ServerProcess(db=tmp / "keyed.db",
                         extra=("--api-keys", str(tmp / "keys"), "--fill-interval", "0.1")).start()
    yield proc
    proc.stop()


def key(k: str) -> list[tuple[str, str]]:
    return [("x-api-key", k)]


def test_api_keys_guard_creating_tables_and_bot_seats(keyed: ServerProcess,
                                                      tmp_path: Path) -> None:
    client = Client(keyed.address)
    stub = client.stub
    try:
        private = struct_pb2.Struct()
        private.update({"private": True})
        req = pb.CreateTableRequest(game="dou_dizhu", options=private, seats=[
            pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN), pb.SeatSpec(kind=pb.SEAT_KIND_BOT),
            pb.SeatSpec(kind=pb.SEAT_KIND_BOT)])
        code, msg = rpc_code(stub.CreateTable, req, timeout=10)
        assert code == C.UNAUTHENTICATED and "x-api-key" in msg
        code, msg = rpc_code(stub.CreateTable, req, metadata=key(BOTS_KEY), timeout=10)
        assert code == C.PERMISSION_DENIED and "tables" in msg
        code, _ = rpc_code(stub.CreateTable, req, metadata=key("x" * 30), timeout=10)
        assert code == C.PERMISSION_DENIED
        tid = stub.CreateTable(req, metadata=key(TABLES_KEY), timeout=10).table_id
        # a private table is not in the lobby, nor in the bots' listing without their key
        def listed(md: list[tuple[str, str]] | None = None, **kw: Any) -> bool:
            reply = stub.ListTables(pb.ListTablesRequest(limit=500, **kw), metadata=md,
                                    timeout=10)
            return tid in {t.table_id for t in reply.tables}

        assert not listed() and not listed(key(BOTS_KEY))
        assert not listed(waiting_for_bot=True) and not listed(key(TABLES_KEY),
                                                               waiting_for_bot=True)
        assert listed(key(BOTS_KEY), waiting_for_bot=True)
        # people join by id without a key; bots need the bots role
        assert client.join(tid, name="ann") == 0
        join = pb.JoinTableRequest(table_id=tid, bot=True)
        assert rpc_code(stub.JoinTable, join, timeout=10)[0] == C.UNAUTHENTICATED
        assert rpc_code(stub.JoinTable, join, metadata=key(TABLES_KEY), timeout=10)[0] == (
            C.PERMISSION_DENIED)
        assert stub.JoinTable(join, metadata=key(BOTS_KEY), timeout=10).seat == 1
        # a real bot worker with its key finds the private table and takes the last bot seat
        bots = Proc("bots", [CROUPIER, "bots", "--server", keyed.address, "--poll", "0.2"],
                    tmp_path / "bots.log", env=child_env(CROUPIER_API_KEY=BOTS_KEY))
        try:
            wait_seated(client, tid, 2, bots)
        finally:
            bots.stop()
        log = keyed.db.with_suffix(".log").read_text()
        assert TABLES_KEY not in log and BOTS_KEY not in log
    finally:
        client.close()


def wait_seated(client: Client, tid: str, seat: int, bots: Proc, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        seats = client.stub.GetView(pb.GetViewRequest(table_id=tid), metadata=bearer(
            client.tokens[0]), timeout=10).table.seats
        if seats[seat].occupied and seats[seat].is_bot:
            return
        assert bots.alive(), bots.describe()
        time.sleep(0.1)
    raise AssertionError(f"no bot took seat {seat}\n{bots.describe()}")


# --- TLS and mutual TLS -----------------------------------------------------------------
def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _cert(subject: str, issuer_key, issuer: str, key, ca: bool = False, server: bool = False):
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject)).issuer_name(_name(issuer))
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if server:
        builder = builder.add_extension(x509.SubjectAlternativeName(
            [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _pem_key(key) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A CA made for this test, a server certificate for 127.0.0.1 and a bot's client
    certificate, both signed by it; and a stranger's certificate signed by another CA."""
    tmp = tmp_path_factory.mktemp("pki")
    ca_key, other_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(
        ec.SECP256R1())
    files: dict[str, Path] = {}

    def save(name: str, data: bytes) -> None:
        files[name] = tmp / name
        files[name].write_bytes(data)

    ca = _cert("croupier test CA", ca_key, "croupier test CA", ca_key, ca=True)
    save("ca.pem", ca.public_bytes(serialization.Encoding.PEM))
    for name, issuer_key, issuer, server in [("server", ca_key, "croupier test CA", True),
                                             ("bot", ca_key, "croupier test CA", False),
                                             ("stranger", other_key, "other CA", False)]:
        key_ = ec.generate_private_key(ec.SECP256R1())
        cert = _cert(name, issuer_key, issuer, key_, server=server)
        save(f"{name}.pem", cert.public_bytes(serialization.Encoding.PEM))
        save(f"{name}.key", _pem_key(key_))
    return files


class TlsServer(ServerProcess):
    """ServerProcess whose readiness check speaks TLS (with the bot's certificate)."""

    creds: grpc.ChannelCredentials | None = None

    def start(self) -> TlsServer:
        log_path = self.db.with_suffix(".log")
        with open(log_path, "ab") as out:
            self.proc = subprocess.Popen(
                [*SERVE, "serve", "--listen", self.address, "--store", f"sqlite:{self.db}",
                 *self.extra],
                cwd=REPO, stdout=out, stderr=out, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        deadline = time.monotonic() + 20
        with grpc.secure_channel(self.address, self.creds) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            while time.monotonic() < deadline:
                assert self.proc.poll() is None, log_path.read_text()
                try:
                    health.Check(health_pb2.HealthCheckRequest(), timeout=0.5)
                    return self
                except grpc.RpcError:
                    time.sleep(0.05)
        raise TimeoutError(log_path.read_text())


def creds(pki: dict[str, Path], who: str | None) -> grpc.ChannelCredentials:
    ca = pki["ca.pem"].read_bytes()
    if who is None:
        return grpc.ssl_channel_credentials(ca)
    return grpc.ssl_channel_credentials(ca, pki[f"{who}.key"].read_bytes(),
                                        pki[f"{who}.pem"].read_bytes())


def test_tls_and_mutual_tls_for_bots(pki: dict[str, Path], tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    keys.write_text(f"{TABLES_KEY} tables\n")
    server = TlsServer(db=tmp_path / "tls.db", port=free_port(), extra=(
        "--tls-cert", str(pki["server.pem"]), "--tls-key", str(pki["server.key"]),
        "--tls-client-ca", str(pki["ca.pem"]), "--api-keys", str(keys),
        "--fill-interval", "0.1"))
    server.creds = creds(pki, "bot")
    server.start()
    try:
        # plaintext, TLS without a client certificate, and a certificate from another CA:
        # no connection at all
        for channel in (grpc.insecure_channel(server.address),
                        grpc.secure_channel(server.address, creds(pki, None)),
                        grpc.secure_channel(server.address, creds(pki, "stranger"))):
            with channel:
                code, _ = rpc_code(pb_grpc.CroupierStub(channel).ListGames,
                                   pb.ListGamesRequest(), timeout=5)
                assert code == C.UNAVAILABLE
        with grpc.secure_channel(server.address, creds(pki, "bot")) as channel:
            stub = pb_grpc.CroupierStub(channel)
            req = pb.CreateTableRequest(game="dou_dizhu", seats=[
                pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN), pb.SeatSpec(kind=pb.SEAT_KIND_BOT),
                pb.SeatSpec(kind=pb.SEAT_KIND_BOT)])
            # a certificate does not replace the key for creating tables...
            assert rpc_code(stub.CreateTable, req, timeout=10)[0] == C.UNAUTHENTICATED
            tid = stub.CreateTable(req, metadata=key(TABLES_KEY), timeout=10).table_id
            # ...but it does for bot seats: the CA vouches for bot workers
            human = stub.JoinTable(pb.JoinTableRequest(table_id=tid, name="ann"), timeout=10)
            assert stub.JoinTable(pb.JoinTableRequest(table_id=tid, bot=True),
                                  timeout=10).seat == 1
        client = Client.__new__(Client)
        client.channel = grpc.secure_channel(server.address, creds(pki, "bot"))
        client.stub = pb_grpc.CroupierStub(client.channel)
        client.tokens = {0: human.token}
        bots = Proc("bots", [CROUPIER, "bots", "--server", server.address, "--poll", "0.2",
                             "--tls-ca", str(pki["ca.pem"]), "--tls-cert", str(pki["bot.pem"]),
                             "--tls-key", str(pki["bot.key"])], tmp_path / "bots.log")
        try:
            wait_seated(client, tid, 2, bots)
            # a tournament runner reaches the same server: TLS with its own certificate and
            # the key that may create tables, on every call it makes
            out = tmp_path / "tourney"
            tourney = [CROUPIER, "tournament", "dou_dizhu", "--entrants", "random,heuristic",
                       "--deals", "1", "--server", server.address, "--out", str(out),
                       "--no-progress", "--tls-ca", str(pki["ca.pem"])]
            mtls = ["--tls-cert", str(pki["bot.pem"]), "--tls-key", str(pki["bot.key"])]
            half = subprocess.run([*tourney, "--tls-cert", str(pki["bot.pem"])],
                                  capture_output=True, text=True, timeout=60, env=child_env())
            assert half.returncode == 2 and "--tls-key" in half.stderr, half.stderr
            keyless = subprocess.run([*tourney, *mtls], capture_output=True, text=True,
                                     timeout=120, env=child_env())
            assert keyless.returncode == 1 and "UNAUTHENTICATED" in keyless.stderr, (
                keyless.stderr)
            done = subprocess.run([*tourney, *mtls], capture_output=True, text=True,
                                  timeout=240, env=child_env(CROUPIER_API_KEY=TABLES_KEY))
            assert done.returncode == 0, done.stderr + bots.describe()
            assert json.loads((out / "report.json").read_text())["deals_complete"] == 1
            # and so do the terminal clients: watch a finished table, play with the key
            finished = json.loads(next((out / "records").glob("*.json")).read_text())
            tls = ["--server", server.address, "--tls-ca", str(pki["ca.pem"]), *mtls]
            watched = subprocess.run([CROUPIER, "watch", finished["tableId"], *tls],
                                     capture_output=True, text=True, timeout=60, env=child_env())
            assert watched.returncode == 0 and "end: match over" in watched.stdout, (
                watched.stdout + watched.stderr)
            keyless = subprocess.run([CROUPIER, "play", "dou_dizhu", "--bots", "medium", *tls],
                                     capture_output=True, text=True, timeout=60, env=child_env(),
                                     stdin=subprocess.DEVNULL)
            assert keyless.returncode == 1 and "UNAUTHENTICATED" in keyless.stdout, (
                keyless.stdout + keyless.stderr)
            key_file = tmp_path / "tables.key"  # the key from a file this time
            key_file.write_text(TABLES_KEY + "\n")
            played = subprocess.run([CROUPIER, "play", "dou_dizhu", "--bots", "medium", *tls,
                                     "--key-file", str(key_file)], capture_output=True,
                                    text=True, timeout=60, env=child_env(),
                                    stdin=subprocess.DEVNULL)
            # the table was made and joined; the closed input then gives the seat back
            assert played.returncode == 130 and "you are seat 0" in played.stdout, (
                played.stdout + played.stderr)
        finally:
            bots.stop()
            client.close()
    finally:
        server.stop()
