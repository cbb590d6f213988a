"""Who may create tables and take bot seats: API keys and TLS.

Without `--api-keys` everything is open, as on a developer's machine. With a key file, creating
a table needs a key with the `tables` role and a bot worker's JoinTable (bot = true) needs a key
with the `bots` role or a client certificate the server verified (mutual TLS). Joining as an
outside entrant (JoinTable with `entrant`) needs a key with the role `entrant:<that name>`: an
outside bot's key lets it take its own seats and nobody else's, and `bots` alone is not enough.
Keys travel as `x-api-key` metadata; the server keeps only their SHA-256 digests and compares
them in constant time. Neither keys nor seat tokens are ever logged.

Key file: one key per line, optionally followed by its roles, comma-separated: `tables`,
`bots`, `entrant:<name>` (any number); `tables,bots` when omitted. Blank lines and lines
starting with '#' are skipped.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from common.level_names import LEVEL_NAMES
from service.reasons import Reason
from service.tables import Code, TableError
from service.validation import ENTRANT_NAME

API_KEY_HEADER = "x-api-key"
ROLES = frozenset({"tables", "bots"})
ENTRANT_ROLE = "entrant:"
MIN_KEY_CHARS = 16


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode()).digest()


@dataclass(frozen=True)
class ApiKeys:
    """Digests of the accepted keys with their roles; empty: no key needed anywhere."""

    entries: tuple[tuple[bytes, frozenset[str]], ...] = ()

    @classmethod
    def load(cls, path: str) -> ApiKeys:
        """Reads a key file; ValueError naming the line that is wrong."""
        if not path:
            return cls()
        try:
            text = Path(path).read_text()
        except OSError as e:
            raise ValueError(f"cannot read the API key file {path}: {e.strerror}") from None
        entries = []
        for n, line in enumerate(text.splitlines(), 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key, _, roles_text = line.partition(" ")
            roles = frozenset(r.strip() for r in roles_text.split(",") if r.strip()) or ROLES
            levels = sorted(r for r in roles if r.removeprefix(ENTRANT_ROLE) in LEVEL_NAMES)
            if levels:
                raise ValueError(
                    f"{path} line {n}: {levels[0]} names a built-in level, served by bot "
                    "workers: give the key the bots role instead"
                )
            unknown = sorted(r for r in roles if r not in ROLES and not _entrant_role(r))
            if unknown:
                raise ValueError(
                    f"{path} line {n}: unknown role(s) {', '.join(unknown)}; known: "
                    f"{', '.join(sorted(ROLES))}, {ENTRANT_ROLE}<name> (names: 1 to 40 of "
                    "a-z, 0-9, '_', '.', '-', starting with a letter or digit)"
                )
            if len(key) < MIN_KEY_CHARS:
                raise ValueError(f"{path} line {n}: keys have at least {MIN_KEY_CHARS} characters")
            entries.append((_digest(key), roles))
        if not entries:
            raise ValueError(f"{path} holds no API key")
        return cls(tuple(entries))

    @property
    def enabled(self) -> bool:
        return bool(self.entries)

    def roles(self, key: str | None) -> frozenset[str]:
        """The roles of `key` (empty if unknown); every entry is compared, in constant time."""
        if not key:
            return frozenset()
        digest = _digest(key)
        found: frozenset[str] = frozenset()
        for known, roles in self.entries:
            if hmac.compare_digest(digest, known):
                found = roles
        return found

    def entrants(self, key: str | None) -> frozenset[str]:
        """The entrants `key` may play as (its `entrant:<name>` roles)."""
        return frozenset(
            r.removeprefix(ENTRANT_ROLE) for r in self.roles(key) if r.startswith(ENTRANT_ROLE)
        )

    def require_entrant(self, key: str | None, entrant: str) -> None:
        """Refuses, with keys on, a key without the role `entrant:<entrant>` (a client
        certificate or the `bots` role do not stand in: an outside bot's seats are its own)."""
        role = f"{ENTRANT_ROLE}{entrant}"
        if not self.enabled or role in self.roles(key):
            return
        if not key:
            raise TableError(
                Code.UNAUTHENTICATED,
                f"joining as entrant {entrant} needs an API key with the '{role}' role: send "
                f"'{API_KEY_HEADER}: <key>' metadata",
                reason=Reason.API_KEY_REQUIRED, meta={"role": role},
            )
        raise TableError(
            Code.PERMISSION_DENIED,
            f"this API key may not join as entrant {entrant} (it lacks the '{role}' role)",
            reason=Reason.API_KEY_FORBIDDEN, meta={"role": role},
        )

    def allows(self, key: str | None, role: str, certified: bool = False) -> bool:
        """Whether keys are off, `key` has `role`, or (bots) the peer is certified."""
        return not self.enabled or certified or role in self.roles(key)

    def require(self, key: str | None, role: str, what: str, certified: bool = False) -> None:
        """Refuses unless `allows`."""
        if self.allows(key, role, certified):
            return
        if not key:
            raise TableError(
                Code.UNAUTHENTICATED,
                f"{what} needs an API key: send '{API_KEY_HEADER}: <key>' metadata",
                reason=Reason.API_KEY_REQUIRED, meta={"role": role},
            )
        raise TableError(Code.PERMISSION_DENIED, f"{what} needs an API key with the '{role}' "
                         "role; this one lacks it",
                         reason=Reason.API_KEY_FORBIDDEN, meta={"role": role})


def _entrant_role(role: str) -> bool:
    return role.startswith(ENTRANT_ROLE) and bool(
        ENTRANT_NAME.fullmatch(role.removeprefix(ENTRANT_ROLE))
    )


def api_key(context: grpc.aio.ServicerContext) -> str | None:
    for name, value in context.invocation_metadata() or ():
        if name.lower() == API_KEY_HEADER:
            return value.decode("latin-1") if isinstance(value, bytes) else str(value)
    return None


def certified(context: Any) -> bool:
    """True when the peer presented a client certificate the server verified (mutual TLS)."""
    try:
        return bool(context.peer_identities())
    except Exception:  # no TLS on this connection
        return False


@dataclass(frozen=True)
class Tls:
    """The server's certificate and key; with `client_ca`, clients must present a certificate
    signed by it (mutual TLS), and such clients may take bot seats without an API key."""

    cert: str = ""
    key: str = ""
    client_ca: str = ""

    def __post_init__(self) -> None:
        if bool(self.cert) != bool(self.key):
            raise ValueError("TLS needs both --tls-cert and --tls-key")
        if self.client_ca and not self.cert:
            raise ValueError("--tls-client-ca needs --tls-cert and --tls-key (mutual TLS is TLS)")

    @property
    def enabled(self) -> bool:
        return bool(self.cert)

    def credentials(self) -> grpc.ServerCredentials:
        def read(path: str) -> bytes:
            try:
                return Path(path).read_bytes()
            except OSError as e:
                raise ValueError(f"cannot read {path}: {e.strerror}") from None

        ca = read(self.client_ca) if self.client_ca else None
        return grpc.ssl_server_credentials(
            [(read(self.key), read(self.cert))],
            root_certificates=ca,
            require_client_auth=ca is not None,
        )
