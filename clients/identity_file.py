"""The player a person's terminal commands act as: a guest identity kept per server in the
user's config directory, or a provider's identity token the person hands over in a file.

A guest token is created on first use (CreateGuest) and kept in
`$XDG_CONFIG_HOME/croupier/identity.json` (or `~/.config/...`), one entry per server address,
readable by the user alone (0600): whoever reads it plays as that player. It is reused while
the server still accepts it (WhoAmI); once refused (expired, the server's guest key gone), a
new guest takes its place. A provider token (from `--identity-file` or
CROUPIER_IDENTITY_TOKEN_FILE) is never stored: the frontend that signed the person in keeps it.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import grpc
from croupier.v1 import croupier_pb2, croupier_pb2_grpc

RPC_TIMEOUT = 15.0
TOKEN_FILE_ENV = "CROUPIER_IDENTITY_TOKEN_FILE"
MAX_TOKEN_FILE_BYTES = 64 * 1024
# Codes that mean "this server keeps no guests" (guest mode off, or a server from before
# players): the commands that can do without a player go on with seat tokens alone.
NO_GUESTS = (grpc.StatusCode.UNIMPLEMENTED, grpc.StatusCode.FAILED_PRECONDITION,
             grpc.StatusCode.PERMISSION_DENIED)


class IdentityError(Exception):
    """The person's identity could not be had; the message says why, never the token."""

    def __init__(self, message: str, code: grpc.StatusCode | None = None) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Identity:
    """A verified player and the token that proves it (`authorization: Bearer <token>`)."""

    token: str
    player: croupier_pb2.Player
    created: bool = False  # a new guest made by this run

    @property
    def metadata(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.token}"),)


def config_path() -> Path:
    """Where guest identities are kept: XDG_CONFIG_HOME (else ~/.config)/croupier/."""
    base = os.environ.get("XDG_CONFIG_HOME") or ""
    root = Path(base) if os.path.isabs(base) else Path.home() / ".config"
    return root / "croupier" / "identity.json"


def _read_all(path: Path) -> dict[str, dict[str, str]]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    servers = data.get("servers") if isinstance(data, dict) else None
    return {k: v for k, v in servers.items() if isinstance(v, dict)} if isinstance(
        servers, dict) else {}


def stored_token(server: str, path: Path | None = None) -> str:
    """The guest token kept for `server` ("" when none)."""
    entry = _read_all(path or config_path()).get(server, {})
    token = entry.get("token", "")
    return token if isinstance(token, str) else ""


def store_token(server: str, token: str, player: croupier_pb2.Player,
                path: Path | None = None) -> Path:
    """Keeps `token` for `server`, beside the other servers' entries, in a file only the user
    may read: written to a 0600 temporary file in the same directory, then renamed over."""
    path = path or config_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    servers = _read_all(path)
    servers[server] = {"token": token, "player_id": player.player_id, "name": player.name}
    fd, tmp = tempfile.mkstemp(prefix=".identity-", dir=path.parent)  # mkstemp: mode 0600
    try:
        with os.fdopen(fd, "w") as out:
            json.dump({"servers": servers}, out, indent=2, sort_keys=True)
            out.write("\n")
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def read_token_file(name: str) -> str:
    """A provider's identity token from a file (the first line, trimmed)."""
    try:
        with open(name, "rb") as f:
            data = f.read(MAX_TOKEN_FILE_BYTES + 1)
    except OSError as e:
        raise IdentityError(f"cannot read the identity token file {name}: "
                            f"{e.strerror or e}") from None
    if len(data) > MAX_TOKEN_FILE_BYTES:
        raise IdentityError(f"the identity token file {name} is too large for a token")
    lines = data.decode("utf-8", errors="replace").strip().splitlines()
    if not lines or not lines[0].strip():
        raise IdentityError(f"the identity token file {name} is empty")
    return lines[0].strip()


def who_am_i(stub: croupier_pb2_grpc.CroupierStub, token: str) -> croupier_pb2.Player:
    return stub.WhoAmI(croupier_pb2.WhoAmIRequest(),
                       metadata=(("authorization", f"Bearer {token}"),), timeout=RPC_TIMEOUT)


def _refused(error: grpc.RpcError) -> IdentityError:
    return IdentityError(f"{error.details() or error.code().name} ({error.code().name})",
                         error.code())


def identity_for(stub: croupier_pb2_grpc.CroupierStub, server: str, name: str,
                 token_file: str = "", path: Path | None = None) -> Identity:
    """The player this command acts as on `server`: the provider token of `token_file` (it
    must verify), else the kept guest while the server accepts it, else a new guest named
    `name` (kept for next time). IdentityError when none can be had; its `code` is the
    server's (NO_GUESTS: the server keeps no guests)."""
    if token_file:
        token = read_token_file(token_file)
        try:
            return Identity(token, who_am_i(stub, token))
        except grpc.RpcError as e:
            raise _refused(e) from None
    kept = stored_token(server, path)
    if kept:
        try:
            return Identity(kept, who_am_i(stub, kept))
        except grpc.RpcError as e:
            if e.code() != grpc.StatusCode.UNAUTHENTICATED:  # not a verdict on the token
                raise _refused(e) from None
    try:
        made = stub.CreateGuest(croupier_pb2.CreateGuestRequest(name=name), timeout=RPC_TIMEOUT)
    except grpc.RpcError as e:
        raise _refused(e) from None
    store_token(server, made.token, made.player, path)
    return Identity(made.token, made.player, created=True)
