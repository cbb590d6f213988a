"""An identity provider made by the tests: signing keys (RSA, EC P-256, Ed25519), their JWKS
served over HTTP from a thread of the test process (and written to a file), tokens signed with
them, and the forged tokens an attacker would try (no signature, algorithm confusion, a
payload changed after signing).

Nothing here is a mock of the server: the tokens go to a real `croupier serve` that was told
to trust this provider (its JWKS URL or file, issuer and audience)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import grpc
import jwt
from croupier.v1 import croupier_pb2 as pb
from croupier.v1 import croupier_pb2_grpc as pb_grpc
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm

from tests.support import ServerProcess, wait_serving

ISSUER = "https://id.example.test/"
AUDIENCE = "croupier-tests"

PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64json(value: Mapping[str, Any]) -> str:
    return b64url(json.dumps(value, separators=(",", ":")).encode())


@dataclass
class SigningKey:
    """One of the provider's keys: its private half signs, its JWK is published."""

    kid: str
    alg: str  # "RS256", "ES256" or "EdDSA"
    private: PrivateKey = field(repr=False)

    @classmethod
    def make(cls, kid: str, alg: str) -> SigningKey:
        private: PrivateKey
        if alg == "RS256":
            private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        elif alg == "ES256":
            private = ec.generate_private_key(ec.SECP256R1())
        elif alg == "EdDSA":
            private = ed25519.Ed25519PrivateKey.generate()
        else:
            raise ValueError(alg)
        return cls(kid, alg, private)

    def jwk(self) -> dict[str, Any]:
        public = self.private.public_key()
        if isinstance(public, rsa.RSAPublicKey):
            jwk = RSAAlgorithm.to_jwk(public, as_dict=True)
        elif isinstance(public, ec.EllipticCurvePublicKey):
            jwk = ECAlgorithm.to_jwk(public, as_dict=True)
        else:
            jwk = OKPAlgorithm.to_jwk(public, as_dict=True)
        out = dict(jwk)
        out.update(kid=self.kid, alg=self.alg, use="sig")
        return out

    def public_pem(self) -> bytes:
        return self.private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)

    def private_pem(self) -> bytes:
        return self.private.private_bytes(serialization.Encoding.PEM,
                                          serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption())

    def sign(self, claims: Mapping[str, Any], **headers: Any) -> str:
        return jwt.encode(dict(claims), self.private, algorithm=self.alg,
                          headers={"kid": self.kid, **headers})


def claims(sub: str, name: str = "", lifetime: float = 600.0, **extra: Any) -> dict[str, Any]:
    """A provider's usual claims for player `sub`, valid from now for `lifetime` seconds."""
    now = int(time.time())
    out: dict[str, Any] = {"iss": ISSUER, "aud": AUDIENCE, "sub": sub, "iat": now,
                           "nbf": now - 5, "exp": now + int(lifetime)}
    if name:
        out["name"] = name
    out.update(extra)
    return out


def jwks(*keys: SigningKey) -> dict[str, Any]:
    return {"keys": [k.jwk() for k in keys]}


def write_jwks(path: Path, *keys: SigningKey) -> Path:
    path.write_text(json.dumps(jwks(*keys)))
    return path


# --- forgeries ------------------------------------------------------------------------------


def unsigned(payload: Mapping[str, Any], kid: str = "") -> str:
    """`alg: none`: a token that claims to need no signature."""
    header = {"alg": "none", "typ": "JWT", **({"kid": kid} if kid else {})}
    return f"{b64json(header)}.{b64json(payload)}."


def hs256_with(secret: bytes, payload: Mapping[str, Any], kid: str = "") -> str:
    """HS256 signed with `secret`: given the provider's public key (PEM or JWK text), the
    algorithm-confusion attack on a verifier that lets the token pick its algorithm."""
    header = {"alg": "HS256", "typ": "JWT", **({"kid": kid} if kid else {})}
    signing_input = f"{b64json(header)}.{b64json(payload)}"
    digest = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{b64url(digest)}"


def tampered(token: str, **changes: Any) -> str:
    """`token` with its payload changed after signing (the signature kept)."""
    head, body, sig = token.split(".")
    payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    payload.update(changes)
    return f"{head}.{b64json(payload)}.{sig}"


# --- the provider's JWKS over HTTP ------------------------------------------------------------


class JwksServer:
    """The provider's JWKS endpoint, served from a thread; `keys` may change (rotation) while
    it runs, and `fetches` counts the requests it answered."""

    def __init__(self, *keys: SigningKey) -> None:
        self.keys = list(keys)
        self.fetches = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                if self.path.split("?")[0] != "/.well-known/jwks.json":
                    self.send_error(404)
                    return
                body = json.dumps(jwks(*owner.keys)).encode()
                owner.fetches += 1
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass  # quiet: the test's output is for the test

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/.well-known/jwks.json"

    def __enter__(self) -> JwksServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@contextmanager
def jwks_served(*keys: SigningKey) -> Iterator[JwksServer]:
    with JwksServer(*keys) as server:
        yield server


# --- a server that trusts the provider, and what a table looks like to a spectator -------------


def trusting_server(tmp: Path, jwks_source: str, *flags: str) -> ServerProcess:
    """`croupier serve` on its own SQLite file (and so its own guest key) in `tmp`, trusting
    the provider whose JWKS is at `jwks_source` (a URL or a file; "" for none)."""
    tmp.mkdir(parents=True, exist_ok=True)
    provider = (("--identity-jwks", jwks_source, "--identity-issuer", ISSUER,
                 "--identity-audience", AUDIENCE,
                 # rotation tests wait for the next fetch: a short least interval
                 "--identity-refresh-seconds", "2") if jwks_source else ())
    server = ServerProcess(db=tmp / "croupier.db",
                           extra=("--fill-interval", "0.1", *provider, *flags))
    try:
        return server.start()
    except TimeoutError:  # a machine busy with other work: give it longer before failing
        wait_serving(server.address, timeout=60, proc=server.proc)
        return server


def trusting_servers(*specs: tuple[Path, str, tuple[str, ...]]) -> list[ServerProcess]:
    """Several `trusting_server`s (tmp, JWKS source, flags), started at once."""
    with ThreadPoolExecutor(len(specs)) as pool:
        futures = [pool.submit(trusting_server, tmp, source, *flags)
                   for tmp, source, flags in specs]
    started = [f.result() for f in futures if f.exception() is None]
    if len(started) < len(specs):  # one did not start: stop the others, then say why
        for server in started:
            server.stop()
        next(f for f in futures if f.exception() is not None).result()
    return started


def bearer_md(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


TableState = tuple[int, int, tuple[tuple[bool, str, str, bool], ...], tuple[int, ...]]


def table_state(stub: pb_grpc.CroupierStub, table_id: str) -> TableState:
    """What a refused call must leave as it was: version, status, every seat (taken, name,
    player, bot) and the seats to act, as a spectator reads them."""
    view = stub.GetView(pb.GetViewRequest(table_id=table_id), timeout=10)
    seats = tuple((s.occupied, s.name, s.player_id, s.is_bot) for s in view.table.seats)
    return view.version, view.table.status, seats, tuple(view.to_act)


def refused(call: Callable[..., Any], request: Any, token: str) -> tuple[grpc.StatusCode, str]:
    """The status of `call(request)` sent with `token` as its bearer; AssertionError if the
    call went through."""
    try:
        call(request, metadata=bearer_md(token), timeout=10)
    except grpc.RpcError as e:
        return e.code(), e.details() or ""
    raise AssertionError(f"{getattr(call, '_method', call)!r} accepted a token it should refuse")
