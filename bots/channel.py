"""Client channels to a Croupier server, for every client of ours (bot workers, tournaments):
plaintext or TLS (optionally with a client certificate), and an API key on every call."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import grpc


class ApiKey(grpc.aio.UnaryUnaryClientInterceptor, grpc.aio.UnaryStreamClientInterceptor):
    """Adds `x-api-key` to every call, so no call site can forget it."""

    def __init__(self, key: str) -> None:
        self._entry = ("x-api-key", key)

    def _with_key(self, details: grpc.aio.ClientCallDetails) -> grpc.aio.ClientCallDetails:
        metadata = grpc.aio.Metadata(*(details.metadata or ()), self._entry)
        return details._replace(metadata=metadata)

    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(self._with_key(details), request)

    async def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(self._with_key(details), request)


def add_tls_flags(parser: argparse.ArgumentParser) -> None:
    """--tls-ca (env CROUPIER_TLS_CA), --tls-cert and --tls-key of the client commands; check
    them with `check_tls_files` before connecting."""
    parser.add_argument("--tls-ca", default=os.environ.get("CROUPIER_TLS_CA", ""),
                        help="connect with TLS, trusting this CA certificate (PEM) "
                        "(env CROUPIER_TLS_CA)")
    parser.add_argument("--tls-cert", default="",
                        help="client certificate (PEM; with --tls-key) for servers that want one")
    parser.add_argument("--tls-key", default="", help="the client certificate's private key")


def check_tls_files(tls_ca: str, tls_cert: str, tls_key: str) -> str | None:
    """What is wrong with these TLS settings (for a command line to say before it starts), or
    None."""
    if (tls_cert or tls_key) and not (tls_cert and tls_key):
        return "a client certificate needs both --tls-cert and --tls-key"
    if (tls_cert or tls_key) and not tls_ca:
        return "a client certificate needs --tls-ca (the CA of the server's certificate)"
    for path in (tls_ca, tls_cert, tls_key):
        if path:
            try:
                Path(path).read_bytes()
            except OSError as e:
                return f"cannot read {path}: {e.strerror}"
    return None


def open_channel(
    server: str,
    tls_ca: str = "",
    tls_cert: str = "",
    tls_key: str = "",
    api_key: str = "",
    options: Sequence[tuple[str, Any]] = (),
) -> grpc.aio.Channel:
    """TLS when a CA is given (trusting it for the server's certificate; with `tls_cert` and
    `tls_key`, presenting that client certificate), else plaintext. Missing or unreadable
    files raise ValueError here, before any call."""
    interceptors = [ApiKey(api_key)] if api_key else None
    if not tls_ca:
        return grpc.aio.insecure_channel(server, options=options, interceptors=interceptors)
    creds = credentials(tls_ca, tls_cert, tls_key)
    return grpc.aio.secure_channel(server, creds, options=options, interceptors=interceptors)


def credentials(tls_ca: str, tls_cert: str = "", tls_key: str = "") -> grpc.ChannelCredentials:
    """TLS trusting `tls_ca`, presenting the client certificate `tls_cert` / `tls_key` if given
    (for aio and for blocking channels alike)."""
    problem = check_tls_files(tls_ca, tls_cert, tls_key)
    if problem:
        raise ValueError(problem)
    key = chain = None
    if tls_cert:
        key, chain = Path(tls_key).read_bytes(), Path(tls_cert).read_bytes()
    return grpc.ssl_channel_credentials(Path(tls_ca).read_bytes(), key, chain)
