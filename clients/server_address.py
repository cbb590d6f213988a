"""Reaching a server from the person-facing commands (`croupier play`, `watch`, `tables`):
the address forms they accept, and a quick, plain answer when nothing serves there.

gRPC takes `host:port` only; people paste URLs (`http://127.0.0.1:50051`, the web client's
`https://...`), on which gRPC's resolver fails with "Misformatted domain name" or waits out
the call's deadline. Here `http://` means plaintext, `https://` TLS (with the system's
roots unless --tls-ca names a CA). And a call to an address where no server listens waits
for its whole deadline (15 s) before saying DEADLINE_EXCEEDED; a person is better told within
two seconds that nothing answers there and how to start a server.
"""

from __future__ import annotations

import argparse
import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import grpc

from common.channel import DEFAULT_SERVER, add_tls_flags, check_tls_files, credentials

READY_WAIT = 2.0  # seconds a command waits for the server before saying none answers
START_HINT = (
    "start one in another terminal (`make run` in the Croupier checkout, or `croupier run`) "
    "or give its address with --server HOST:PORT or CROUPIER_SERVER"
)


@dataclass(frozen=True)
class Target:
    """Where gRPC connects (`host:port`) and whether the address asked for TLS (https://)."""

    address: str
    tls: bool = False


def parse_server(text: str) -> Target:
    """`host:port`, `http://host[:port]` or `https://host[:port]` (ports 80 and 443 when
    left out); ValueError saying what is accepted."""
    text = text.strip()
    if "://" not in text:
        return Target(text)
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise ValueError(f"{text!r}: a server address is HOST:PORT, http://HOST:PORT or "
                         "https://HOST:PORT (TLS)")
    if parts.path.strip("/") or parts.query or parts.fragment:
        raise ValueError(f"{text!r}: a gRPC server address has no path; give "
                         f"{scheme}://HOST:PORT")
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"{text!r}: the port is not a number") from None
    host = parts.hostname or ""
    if not host:
        raise ValueError(f"{text!r}: the address names no host")
    if ":" in host:
        host = f"[{host}]"  # IPv6, as gRPC wants it
    return Target(f"{host}:{port or (443 if scheme == 'https' else 80)}", scheme == "https")


def channel_credentials(target: Target, tls_ca: str, tls_cert: str, tls_key: str
                        ) -> grpc.ChannelCredentials | None:
    """TLS credentials when a CA is given or the address is https://, else None (plaintext)."""
    if tls_ca:
        return credentials(tls_ca, tls_cert, tls_key)
    if target.tls:
        return grpc.ssl_channel_credentials()  # the system's roots
    return None


def flags_problem(server: str, tls_ca: str, tls_cert: str, tls_key: str) -> str | None:
    """What is wrong with a command's --server and TLS flags, or None."""
    try:
        parse_server(server)
    except ValueError as e:
        return str(e)
    return check_tls_files(tls_ca, tls_cert, tls_key)


def open_channel(server: str, tls_ca: str = "", tls_cert: str = "", tls_key: str = "",
                 options: Sequence[tuple[str, Any]] = ()) -> grpc.Channel:
    """A blocking channel to `server` in any accepted form; ValueError for another."""
    target = parse_server(server)
    creds = channel_credentials(target, tls_ca, tls_cert, tls_key)
    if creds is not None:
        return grpc.secure_channel(target.address, creds, options=options)
    return grpc.insecure_channel(target.address, options=options)


def not_answering(channel: grpc.Channel, server: str, tls_ca: str = "",
                  wait: float = READY_WAIT) -> str | None:
    """None once `channel` (to `server`) is ready within `wait` seconds; else what a person
    should read: nothing listens there, or something does that does not speak gRPC there."""
    target = parse_server(server)
    tls = bool(tls_ca) or target.tls
    try:
        grpc.channel_ready_future(channel).result(timeout=wait)
        return None
    except grpc.FutureTimeoutError:
        pass
    host, _, port = target.address.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=1.0):
            listening = True
    except (OSError, ValueError):
        listening = False
    if not listening:
        return f"no Croupier server answers at {target.address}: {START_HINT}"
    how = "over TLS" if tls else "in plaintext (https:// or --tls-ca for TLS)"
    return (f"{target.address} accepts connections but no gRPC server answers there "
            f"{how}: is it Croupier's gRPC port (not the web port)?")


def add_server_flags(parser: argparse.ArgumentParser) -> None:
    """--server (these forms) and the TLS flags, for every client command."""
    parser.add_argument(
        "--server",
        default=os.environ.get("CROUPIER_SERVER", DEFAULT_SERVER),
        help="server address host:port (http://host:port too; https://host:port for TLS) "
        "(env CROUPIER_SERVER; default %(default)s)",
    )
    add_tls_flags(parser)
