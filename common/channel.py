"""Client channels to a Croupier server, for every client of ours (bot workers, tournaments,
the terminal, the lobby): plaintext or TLS (optionally with a client certificate), and an API
key on every call. The server checks its own TLS files with the same `check_tls_files`.

API keys come from the environment (CROUPIER_API_KEY) or a file (--key-file, env
CROUPIER_API_KEY_FILE), never from the command line: a process's arguments are readable by
every process of the host (/proc/PID/cmdline), a bot program started by the bridge included.
"""

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


DEFAULT_SERVER = "127.0.0.1:50051"  # where clients look without --server: the server's default
KEY_ENV = "CROUPIER_API_KEY"
KEY_FILE_ENV = "CROUPIER_API_KEY_FILE"
MAX_KEY_FILE = 4096  # bytes: a key file holds one key
KEY_ON_ARGV = (
    "{flag} would put the API key on the command line, where every process of this host can "
    "read it (/proc/PID/cmdline); give it in the environment ({env}=...) or in a file "
    "(--key-file PATH, or env {file_env})"
)


class _KeyOnArgv(argparse.Action):
    """--key / --api-key: refused, with where the key goes instead (its value never shown)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        parser.error(KEY_ON_ARGV.format(flag=option_string or "--key", env=KEY_ENV,
                                        file_env=KEY_FILE_ENV))


def add_key_flags(parser: argparse.ArgumentParser, role: str) -> None:
    """--key-file (env CROUPIER_API_KEY_FILE) of a client command, the key itself taken from
    env CROUPIER_API_KEY otherwise (`api_key_of`); --key and --api-key are refused with a
    message saying so. `role`: what the key needs, for the help."""
    parser.add_argument(
        "--key-file", metavar="PATH", default=os.environ.get(KEY_FILE_ENV, ""),
        help=f"a file holding the API key ({role}), for servers run with --api-keys (env "
        f"{KEY_FILE_ENV}; or the key itself in env {KEY_ENV}; never on the command line)")
    parser.add_argument("--key", "--api-key", dest="key_on_argv", nargs="?",
                        action=_KeyOnArgv, help=argparse.SUPPRESS)


def api_key_of(args: argparse.Namespace) -> str:
    """The key of a command parsed with `add_key_flags`; ValueError saying what is wrong."""
    return load_key(key_file=getattr(args, "key_file", ""))


def load_key(key: str = "", key_file: str = "") -> str:
    """`key` if given; else the one in `key_file`, or in the file env CROUPIER_API_KEY_FILE
    names; else env CROUPIER_API_KEY; "" if none. A file holds the key alone (surrounding
    whitespace ignored). ValueError if the file cannot be read or holds no single key (the
    message never quotes the file)."""
    if key:
        return key
    path = key_file or os.environ.get(KEY_FILE_ENV, "")
    if not path:
        return os.environ.get(KEY_ENV, "")
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_KEY_FILE + 1)
    except OSError as e:
        raise ValueError(f"cannot read the key file {path}: {e.strerror}") from None
    try:
        text = data.decode("ascii").strip()
    except UnicodeDecodeError:
        text = ""
    if len(data) > MAX_KEY_FILE or not text or any(c.isspace() for c in text):
        raise ValueError(f"the key file {path} does not hold one key (one line, no spaces)")
    return text


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
