"""Identity tokens under attack, through real servers: an identity provider of the tests' own
making (RSA, EC P-256 and Ed25519 keys; its JWKS served over HTTP from a thread here, or
written to a file) and `croupier serve` processes told to trust it.

Every forgery is refused with UNAUTHENTICATED and leaves the table as it was (version, seats,
the seats to act); another player's valid token is PERMISSION_DENIED at a seat that is not
theirs; a key added to the JWKS is taken without a restart; a guest token is worth nothing
to another server, and an old guest key still verifies beside a new one; seat tokens go on
working beside identities; and nothing of a token, a claim or a key reaches the server's log.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from croupier.v1 import croupier_pb2 as pb
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from tests.identity_support import (
    JwksServer,
    SigningKey,
    b64url,
    bearer_md,
    claims,
    hs256_with,
    refused,
    table_state,
    tampered,
    trusting_server,
    trusting_servers,
    unsigned,
    write_jwks,
)
from tests.support import Client, ServerProcess

pytestmark = pytest.mark.e2e

RS256_HEADER = b'{"alg":"RS256","typ":"JWT"}'
UNAUTH = grpc.StatusCode.UNAUTHENTICATED
DENIED = grpc.StatusCode.PERMISSION_DENIED


class Provider:
    """The tests' identity provider: three keys, their JWKS served over HTTP."""

    def __init__(self) -> None:
        self.rsa = SigningKey.make("rsa-1", "RS256")
        self.ec = SigningKey.make("ec-1", "ES256")
        self.ed = SigningKey.make("ed-1", "EdDSA")
        self.jwks = JwksServer(self.rsa, self.ec, self.ed)

    def token(self, sub: str, name: str = "", key: SigningKey | None = None) -> str:
        return (key or self.rsa).sign(claims(sub, name))


@pytest.fixture(scope="module")
def provider() -> Iterator[Provider]:
    p = Provider()
    with p.jwks:
        yield p


@pytest.fixture(scope="module")
def trusting(provider: Provider, tmp_path_factory: pytest.TempPathFactory
             ) -> Iterator[ServerProcess]:
    server = trusting_server(tmp_path_factory.mktemp("trusting"), provider.jwks.url)
    yield server
    server.stop()


@pytest.fixture
def client(trusting: ServerProcess) -> Iterator[Client]:
    c = Client(trusting.address)
    yield c
    c.close()


def join(client: Client, token: str, table_id: str, seat: int | None = None
         ) -> pb.JoinTableResponse:
    request = pb.JoinTableRequest(table_id=table_id)
    if seat is not None:
        request.seat = seat
    return client.stub.JoinTable(request, metadata=bearer_md(token), timeout=10)


def seated(client: Client, tokens: list[str]) -> str:
    """A Dou Dizhu table whose first seats are joined with these identity tokens."""
    table = client.create("dou_dizhu")
    for seat, token in enumerate(tokens):
        join(client, token, table.table_id, seat)
    return table.table_id


def unique(word: str) -> str:
    """A subject or name no log line could hold by chance."""
    return f"{word}-{secrets.token_hex(6)}"


# --- provider tokens -----------------------------------------------------------------------


@pytest.mark.parametrize("alg", ["RS256", "ES256", "EdDSA"])
def test_a_provider_token_of_each_algorithm_names_its_player(
    provider: Provider, client: Client, alg: str
) -> None:
    key = {"RS256": provider.rsa, "ES256": provider.ec, "EdDSA": provider.ed}[alg]
    sub, name = unique("sub"), "Ada Lovelace"
    token = key.sign(claims(sub, name, lifetime=900))
    me = client.stub.WhoAmI(pb.WhoAmIRequest(), metadata=bearer_md(token), timeout=10)
    assert (me.player_id, me.name, me.guest) == (sub, name, False)
    assert abs(me.expires_at - (time.time() + 900)) < 60


def forgeries(p: Provider, victim: str) -> dict[str, str]:
    """Every token here claims to be `victim` (or to be a token at all) and must not pass."""
    now = int(time.time())
    good = claims(victim, "Victim")
    stranger = SigningKey.make("rsa-unpublished", "RS256")
    impostor = SigningKey.make(p.rsa.kid, "RS256")  # a key of its own under a published kid
    eve = p.rsa.sign(claims(unique("eve"), "Eve"))
    return {
        "alg none": unsigned(good, kid=p.rsa.kid),
        "alg none without kid": unsigned(good),
        "HS256 keyed with the provider's public key (PEM)": hs256_with(p.rsa.public_pem(), good,
                                                                       kid=p.rsa.kid),
        "HS256 keyed with the provider's public key (JWK)": hs256_with(
            json.dumps(p.rsa.jwk()).encode(), good, kid=p.rsa.kid),
        "HS256 keyed with an Ed25519 public key": hs256_with(p.ed.public_pem(), good,
                                                             kid=p.ed.kid),
        "expired": p.rsa.sign({**good, "iat": now - 7200, "nbf": now - 7200,
                               "exp": now - 3600}),
        "not yet valid": p.rsa.sign({**good, "iat": now, "nbf": now + 3600,
                                     "exp": now + 7200}),
        "without an expiry": p.rsa.sign({k: v for k, v in good.items() if k != "exp"}),
        "wrong issuer": p.rsa.sign({**good, "iss": "https://id.elsewhere.test/"}),
        "wrong audience": p.rsa.sign({**good, "aud": "another-service"}),
        "unknown kid": stranger.sign(good),
        "another key under a published kid": impostor.sign(good),
        "ES256 signature under the RSA key's kid": p.ec.sign(good, kid=p.rsa.kid),
        "tampered payload": tampered(eve, sub=victim),
        "signature of another token": ".".join(unsigned(good).split(".")[:2]
                                               + [eve.split(".")[2]]),
        "a guest's id claimed by the provider": p.rsa.sign({**good, "sub": "guest:abc"}),
        "a guest token signed with the provider's key": p.rsa.sign(
            {**good, "iss": "croupier:guest", "aud": "croupier", "sub": "guest:abc"}),
        # over the server's limit, under gRPC's 8 KB for all of a call's metadata
        "oversized": p.rsa.sign({**good, "pad": "x" * 4500}),
        "garbage with dots": "not.a.jwt",
        "dots only": "...",
        "json parts that are not JSON": f"{b64url(b'{')}.{b64url(b'[1,2')}.{b64url(b'x')}",
        "a payload that is a list": f"{b64url(RS256_HEADER)}.{b64url(b'[1]')}.abc",
        "binary": b64url(secrets.token_bytes(40)) + "." + b64url(secrets.token_bytes(40)),
    }


def forgery_names() -> list[str]:
    return list(forgeries(Provider(), "x"))


@pytest.fixture(scope="module")
def playing_table(provider: Provider, trusting: ServerProcess) -> tuple[str, list[str]]:
    """A Dou Dizhu table being played by three provider players: (table id, their subjects)."""
    c = Client(trusting.address)
    subs = [unique("alice"), unique("bob"), unique("carol")]
    table_id = seated(c, [provider.token(s, s.split("-")[0].title()) for s in subs])
    c.close()
    return table_id, subs


@pytest.mark.parametrize("forgery", forgery_names())
def test_a_forged_token_is_unauthenticated_and_changes_nothing(
    provider: Provider, client: Client, playing_table: tuple[str, list[str]], forgery: str
) -> None:
    table_id, subs = playing_table
    before = table_state(client.stub, table_id)
    to_act = before[3][0]
    token = forgeries(provider, subs[to_act])[forgery]
    view = client.stub.GetView(pb.GetViewRequest(table_id=table_id),
                               metadata=bearer_md(provider.token(subs[to_act])), timeout=10)
    attacks = [
        (client.stub.WhoAmI, pb.WhoAmIRequest()),
        (client.stub.JoinTable, pb.JoinTableRequest(table_id=table_id, seat=to_act)),
        (client.stub.SubmitMove, pb.SubmitMoveRequest(
            table_id=table_id, move=view.legal_moves[0], expected_version=view.version)),
        (client.stub.LeaveTable, pb.LeaveTableRequest(table_id=table_id)),
        (client.stub.GetView, pb.GetViewRequest(table_id=table_id)),
    ]
    for call, request in attacks:
        code, message = refused(call, request, token)
        assert code == UNAUTH, (forgery, type(request).__name__, code, message)
        assert "identity token" in message, message
        assert token not in message and subs[to_act] not in message
    assert table_state(client.stub, table_id) == before, forgery


def test_a_token_past_any_limit_is_refused_and_changes_nothing(
    provider: Provider, client: Client, playing_table: tuple[str, list[str]]
) -> None:
    """A token too large for gRPC's metadata is the transport's to refuse (RESOURCE_EXHAUSTED,
    before the server reads it); one the transport lets through but the server will not read
    is UNAUTHENTICATED. Either way, nothing moves."""
    table_id, subs = playing_table
    before = table_state(client.stub, table_id)
    sub = subs[before[3][0]]
    for pad, codes in ((4500, {UNAUTH}), (30_000, {UNAUTH, grpc.StatusCode.RESOURCE_EXHAUSTED})):
        token = provider.rsa.sign({**claims(sub), "pad": "x" * pad})
        for _ in range(5):
            code, message = refused(client.stub.LeaveTable,
                                    pb.LeaveTableRequest(table_id=table_id), token)
            assert code in codes, (len(token), code, message)
    assert table_state(client.stub, table_id) == before


def test_a_refused_kid_is_fetched_again_once_and_a_new_key_is_taken_without_restart(
    tmp_path: Path,
) -> None:
    """A fresh server meets a kid it does not know: it fetches the JWKS (a refresh), still
    does not find it, refuses. A flood of made-up kids does not become a flood of fetches.
    Once the provider publishes the key, the same token passes, the server never restarted;
    the old key still verifies."""
    old = SigningKey.make("rot-1", "ES256")
    new = SigningKey.make("rot-2", "RS256")
    sub = unique("rotated")
    with JwksServer(old) as jwks:
        server = trusting_server(tmp_path / "url", jwks.url)
        c = Client(server.address)
        try:
            early = new.sign(claims(sub, "Rot"))
            fetched = jwks.fetches
            code, message = refused(c.stub.WhoAmI, pb.WhoAmIRequest(), early)
            assert code == UNAUTH and "does not publish" in message, message
            assert jwks.fetches == fetched + 1  # the unknown kid made the server look again
            for _ in range(20):
                flood = SigningKey.make(secrets.token_hex(4), "ES256") if _ == 0 else old
                forged = flood.sign(claims(sub), kid=secrets.token_hex(8))
                assert refused(c.stub.WhoAmI, pb.WhoAmIRequest(), forged)[0] == UNAUTH
            assert jwks.fetches <= fetched + 2, jwks.fetches  # not one fetch a token
            jwks.keys.append(new)  # the provider rotates: the new key is published
            deadline = time.monotonic() + 30
            me = None
            while me is None and time.monotonic() < deadline:
                try:
                    me = c.stub.WhoAmI(pb.WhoAmIRequest(), metadata=bearer_md(early), timeout=10)
                except grpc.RpcError as e:
                    assert e.code() == UNAUTH
                    time.sleep(0.5)
            assert me is not None and me.player_id == sub, "the new key was never taken"
            assert server.proc is not None and server.proc.poll() is None  # never restarted
            still = c.stub.WhoAmI(pb.WhoAmIRequest(), metadata=bearer_md(old.sign(claims(sub))),
                                  timeout=10)
            assert still.player_id == sub
        finally:
            c.close()
            server.stop()


def test_a_jwks_file_is_read_again_for_a_new_key_and_hs256_is_the_dev_secrets_alone(
    tmp_path: Path,
) -> None:
    key = SigningKey.make("file-1", "EdDSA")
    later = SigningKey.make("file-2", "ES256")
    jwks_file = write_jwks(tmp_path / "jwks.json", key)
    secret = secrets.token_urlsafe(40)
    (tmp_path / "dev.secret").write_text(secret + "\n")
    server = trusting_server(tmp_path / "srv", str(jwks_file), "--identity-dev-secret-file",
                             str(tmp_path / "dev.secret"))
    c = Client(server.address)
    try:
        sub = unique("filed")
        me = c.stub.WhoAmI(pb.WhoAmIRequest(), metadata=bearer_md(key.sign(claims(sub))),
                           timeout=10)
        assert me.player_id == sub
        # the development secret signs HS256 tokens ...
        dev = hs256_with(secret.encode(), claims(sub, "Dev"))
        assert c.stub.WhoAmI(pb.WhoAmIRequest(), metadata=bearer_md(dev),
                             timeout=10).player_id == sub
        # ... and nothing else does, the provider's public key least of all
        for confused in (hs256_with(key.public_pem(), claims(sub), kid=key.kid),
                         hs256_with(secret.encode()[:-1], claims(sub)),
                         hs256_with(secret.encode(), {**claims(sub), "iss": "https://x/"})):
            assert refused(c.stub.WhoAmI, pb.WhoAmIRequest(), confused)[0] == UNAUTH
        # the file gains a key: a token under it passes once the server looked again
        write_jwks(jwks_file, key, later)
        token = later.sign(claims(sub))
        deadline = time.monotonic() + 30
        while True:
            try:
                c.stub.WhoAmI(pb.WhoAmIRequest(), metadata=bearer_md(token), timeout=10)
                break
            except grpc.RpcError as e:
                assert e.code() == UNAUTH and time.monotonic() < deadline, e.details()
                time.sleep(0.5)
    finally:
        c.close()
        server.stop()


# --- another player's valid token ---------------------------------------------------------


def test_another_players_valid_token_is_denied_at_a_seat_not_theirs(
    provider: Provider, client: Client
) -> None:
    alice, bob, carol, mallory = (unique(w) for w in ("alice", "bob", "carol", "mallory"))
    tokens = {s: provider.token(s, s.split("-")[0]) for s in (alice, bob, carol, mallory)}
    table_id = seated(client, [tokens[alice], tokens[bob]])  # seat 2 still open
    before = table_state(client.stub, table_id)
    code, message = refused(client.stub.JoinTable, pb.JoinTableRequest(table_id=table_id, seat=0),
                            tokens[mallory])
    assert code == DENIED and "another player" in message, message
    # Bob holds seat 1: Alice's seat is not his either
    code, message = refused(client.stub.JoinTable, pb.JoinTableRequest(table_id=table_id, seat=0),
                            tokens[bob])
    assert code in (DENIED, grpc.StatusCode.FAILED_PRECONDITION), message
    assert table_state(client.stub, table_id) == before
    join(client, tokens[carol], table_id, 2)
    before = table_state(client.stub, table_id)
    to_act = before[3][0]
    owner = tokens[[alice, bob, carol][to_act]]
    view = client.stub.GetView(pb.GetViewRequest(table_id=table_id), metadata=bearer_md(owner),
                               timeout=10)
    move = pb.SubmitMoveRequest(table_id=table_id, move=view.legal_moves[0],
                                expected_version=view.version)
    for call, request in ((client.stub.SubmitMove, move),
                          (client.stub.LeaveTable, pb.LeaveTableRequest(table_id=table_id)),
                          (client.stub.JoinTable, pb.JoinTableRequest(table_id=table_id,
                                                                       seat=to_act))):
        code, message = refused(call, request, tokens[mallory])
        assert code == DENIED, (type(request).__name__, code, message)
        assert mallory not in message
    assert table_state(client.stub, table_id) == before
    # the owner's own token plays the same move
    reply = client.stub.SubmitMove(move, metadata=bearer_md(owner), timeout=10)
    assert reply.version == before[0] + 1


def test_seat_tokens_play_beside_identities_to_the_end(provider: Provider, client: Client) -> None:
    """Seat 0 is a seat token's (no identity), seat 1 a provider player's, seat 2 a guest's:
    each plays with what its client holds (the seat token, or the identity token itself) and
    the deal ends as any other."""
    table = client.create("dou_dizhu", options=None)
    anonymous = client.stub.JoinTable(pb.JoinTableRequest(table_id=table.table_id, seat=0,
                                                          name="anon"), timeout=10)
    sub = unique("dana")
    dana = provider.token(sub, "Dana")
    join(client, dana, table.table_id, 1)
    guest = client.stub.CreateGuest(pb.CreateGuestRequest(name="Gus"), timeout=10)
    joined = join(client, guest.token, table.table_id, 2)
    seats = client.view(table.table_id).table.seats
    assert [s.player_id for s in seats] == ["", sub, guest.player.player_id]
    credentials = {0: anonymous.token, 1: dana, 2: joined.token}
    moves = 0
    while True:
        public = client.view(table.table_id)
        if not public.to_act:
            break
        seat = public.to_act[0]
        md = bearer_md(credentials[seat])
        mine = client.stub.GetView(pb.GetViewRequest(table_id=table.table_id), metadata=md,
                                   timeout=10)
        assert mine.seat == seat
        client.stub.SubmitMove(pb.SubmitMoveRequest(table_id=table.table_id,
                                                    move=mine.legal_moves[0],
                                                    expected_version=mine.version),
                               metadata=md, timeout=10)
        moves += 1
        # the guest plays with its identity token as well as with its seat token
        credentials[2] = guest.token if moves % 2 else joined.token
        assert moves < 500
    assert client.view(table.table_id).result.finished


def test_a_provider_display_name_reaches_clients_printable(
    provider: Provider, client: Client
) -> None:
    """A display name is the provider's user's to choose: escape sequences in it must not
    reach other players' terminals through the seat's name."""
    sub = unique("esc")
    token = provider.token(sub, "Eve\x1b[2J\x1b]0;owned\x07\u202e")
    me = client.stub.WhoAmI(pb.WhoAmIRequest(), metadata=bearer_md(token), timeout=10)
    assert me.name.isprintable() and me.name.startswith("Eve"), repr(me.name)
    table = client.create("dou_dizhu")
    joined = join(client, token, table.table_id)
    assert joined.table.seats[joined.seat].name.isprintable()


# --- guests --------------------------------------------------------------------------------


def ed25519_pem() -> str:
    return ed25519.Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()).decode()


def test_guests_of_one_key_are_nobody_to_another_and_rotation_keeps_the_old_key(
    client: Client, tmp_path: Path
) -> None:
    """A guest token is worth nothing to a server with another guest key. The first key of
    --guest-key-file signs, every key verifies: a server whose file holds a new key before
    the old one accepts the old guests and signs new ones with the new key; a server that
    dropped the old key refuses the old guests."""
    old, new = ed25519_pem(), ed25519_pem()
    files = {"old": old, "both": new + old, "new": new}
    for name, text in files.items():
        (tmp_path / f"{name}.pem").write_text(text)
        (tmp_path / f"{name}.pem").chmod(0o600)
    started = trusting_servers(*((tmp_path / name, "", ("--guest-key-file",
                                                          str(tmp_path / f"{name}.pem")))
                                 for name in files))
    servers = dict(zip(files, started, strict=True))
    clients = {name: Client(s.address) for name, s in servers.items()}
    try:
        # a guest of the module's server (its own key, beside its SQLite file) is nobody here
        stranger = client.stub.CreateGuest(pb.CreateGuestRequest(name="Wanda"), timeout=10)
        other = clients["both"]
        table = other.create("dou_dizhu")
        before = table_state(other.stub, table.table_id)
        for call, request in ((other.stub.WhoAmI, pb.WhoAmIRequest()),
                              (other.stub.JoinTable, pb.JoinTableRequest(
                                  table_id=table.table_id))):
            code, message = refused(call, request, stranger.token)
            assert code == UNAUTH and "guest key" in message, message
        assert table_state(other.stub, table.table_id) == before

        def who(server: str, token: str) -> grpc.StatusCode | str:
            try:
                return clients[server].stub.WhoAmI(pb.WhoAmIRequest(),
                                                   metadata=bearer_md(token),
                                                   timeout=10).player_id
            except grpc.RpcError as e:
                return e.code()

        first = clients["old"].stub.CreateGuest(pb.CreateGuestRequest(name="Old"), timeout=10)
        second = clients["both"].stub.CreateGuest(pb.CreateGuestRequest(name="New"), timeout=10)
        assert who("both", first.token) == first.player.player_id  # the old key verifies
        assert who("new", first.token) == UNAUTH  # dropped: its guests are gone
        assert who("new", second.token) == second.player.player_id  # signed with the new key
        assert who("old", second.token) == UNAUTH
    finally:
        for c in clients.values():
            c.close()
        for s in servers.values():
            s.stop()


# --- the log ------------------------------------------------------------------------------


def test_no_token_claim_or_key_reaches_the_log(provider: Provider, tmp_path: Path) -> None:
    secret = secrets.token_urlsafe(40)
    (tmp_path / "dev.secret").write_text(secret)
    guest_pem = ed25519_pem()
    (tmp_path / "guest.pem").write_text(guest_pem)
    server = trusting_server(tmp_path / "logged", provider.jwks.url,
                             "--identity-dev-secret-file", str(tmp_path / "dev.secret"),
                             "--guest-key-file", str(tmp_path / "guest.pem"))
    c = Client(server.address)
    subs = [unique("logsub"), unique("logsub"), unique("logsub")]
    names = [unique("Logname"), unique("Logname"), unique("Logname")]
    keys = [provider.rsa, provider.ec, provider.ed]
    tokens = [k.sign(claims(s, n)) for k, s, n in zip(keys, subs, names, strict=True)]
    secrets_seen: list[str] = [*tokens, *subs, *names, secret]
    try:
        table_id = seated(c, tokens)
        for token in tokens:
            c.stub.WhoAmI(pb.WhoAmIRequest(), metadata=bearer_md(token), timeout=10)
        view = c.stub.GetView(pb.GetViewRequest(table_id=table_id),
                              metadata=bearer_md(tokens[table_state(c.stub, table_id)[3][0]]),
                              timeout=10)
        c.stub.SubmitMove(pb.SubmitMoveRequest(table_id=table_id, move=view.legal_moves[0],
                                               expected_version=view.version),
                          metadata=bearer_md(tokens[view.seat]), timeout=10)
        guest_name = unique("Guestname")
        guest = c.stub.CreateGuest(pb.CreateGuestRequest(name=guest_name), timeout=10)
        secrets_seen += [guest.token, guest.player.player_id, guest_name]
        c.stub.WhoAmI(pb.WhoAmIRequest(), metadata=bearer_md(guest.token), timeout=10)
        dev = hs256_with(secret.encode(), claims(unique("devsub"), unique("Devname")))
        secrets_seen.append(dev)
        c.stub.WhoAmI(pb.WhoAmIRequest(), metadata=bearer_md(dev), timeout=10)
        for forged in forgeries(provider, subs[0]).values():
            secrets_seen.append(forged)
            refused(c.stub.WhoAmI, pb.WhoAmIRequest(), forged)
            refused(c.stub.JoinTable, pb.JoinTableRequest(table_id=table_id), forged)
        c.stub.LeaveTable(pb.LeaveTableRequest(table_id=table_id),
                          metadata=bearer_md(tokens[2]), timeout=10)
    finally:
        c.close()
        server.stop()
    log = server.log_text()
    assert '"method": "WhoAmI"' in log or "WhoAmI" in log, log[-2000:]  # the calls were logged
    assert "UNAUTHENTICATED" in log
    for text in secrets_seen:
        for part in [text, *[p for p in text.split(".") if len(p) >= 16]]:
            assert part not in log, f"{part[:24]}... is in the server log"
    key_material = [provider.rsa.jwk()["n"], provider.ec.jwk()["x"], provider.ed.jwk()["x"]]
    pem_lines = [line for pem in (guest_pem, provider.rsa.private_pem().decode())
                 for line in pem.splitlines() if not line.startswith("-----")]
    for part in key_material + pem_lines:
        assert part[:32] not in log, "key material in the server log"
