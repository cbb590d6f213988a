"""The `croupier` command: serve, run (server and bots together), and the other owners'
subcommands (bots, bot-bridge, play, watch, arena), imported only when called so that one missing or broken
module does not take the others down."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import importlib.util
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common.masking import masked
from engines.registry import ENGINES
from service.config import DEFAULT_LISTEN, DEFAULT_WEB_LISTEN, ServeConfig, client_address, env

READY = b"ready\n"  # what a server child of `croupier run` writes once its ports listen

# subcommand -> (module, function, help); each function takes argv and returns an exit code
DISPATCH: dict[str, tuple[str, str, str]] = {
    "bots": ("bots.worker", "main", "run bot worker processes that take bot seats"),
    "bot-bridge": ("bots.bridge", "main", "play an outside entrant's seats with a program in "
                   "any language (JSON lines on stdin/stdout)"),
    "play": ("clients.terminal", "play_main", "play a game in this terminal"),
    "watch": ("clients.terminal", "watch_main", "watch a table in this terminal"),
    "arena": ("bots.arena", "main", "play bots against each other and rate them"),
    "replay": ("bots.records", "main", "replay game records through the engine and check them"),
    "tournament": ("bots.tournament.cli", "main", "bot-versus-bot tournament through a server"),
    "tournament-merge": ("bots.tournament.cli", "merge_main", "merge tournament shards' results"),
    "ladder": ("bots.ladder", "main", "keep playing rated matches on a server's ladder"),
    "tables": ("clients.lobby", "main", "list a server's tables and how to watch each"),
}


def _shown(setting: str) -> str:
    """A setting as --help may show it: credentials masked, argparse's '%' escaped."""
    return masked(setting).replace("%", "%%")


def _serve_flags(parser: argparse.ArgumentParser, defaults: ServeConfig) -> None:
    parser.add_argument(
        "--listen",
        default=defaults.listen,
        help="address to listen on, host:port (env CROUPIER_LISTEN; default %(default)s)",
    )
    parser.add_argument(
        "--store",
        default=defaults.store,
        help="'sqlite:<path>' (created if absent), 'redis://host:port/db[?prefix=P&retention=S]' "
        "(shared by replicas; finished tables expire after S seconds), "
        "'redis+sentinel://host:26379,host:26379/service/db[?...]' (the primary Redis Sentinel "
        "names), 'redis+cluster://host:port,host:port/[?prefix=P&buckets=N]' (a Redis Cluster; "
        "with any Redis URL, '&wait_replicas=1' acknowledges moves once a replica holds them) "
        "or 'memory' (tests only: "
        "lost on exit); a password in it is never logged nor shown (env CROUPIER_STORE; "
        f"default {_shown(defaults.store)})",
    )
    parser.add_argument(
        "--cors-origins",
        default=defaults.cors_origins,
        help="comma-separated origins (e.g. https://app.example.com, or *) whose pages may call "
        "the web port; same-origin pages need none (env CROUPIER_CORS_ORIGINS)",
    )
    parser.add_argument(
        "--log-level",
        default=defaults.log_level,
        choices=("debug", "info", "warning", "error"),
        help="the console's (stderr's) level; on a terminal, the per-RPC and per-decision "
        "events count as debug (env CROUPIER_LOG_LEVEL; default %(default)s)",
    )
    parser.add_argument(
        "--log-file",
        metavar="PATH",
        default=defaults.log_file,
        help="also append every event, debug included, to PATH as JSON lines "
        "(env CROUPIER_LOG_FILE; default none)",
    )


def build_parser() -> argparse.ArgumentParser:
    defaults = ServeConfig.from_env()
    parser = argparse.ArgumentParser(
        prog="croupier",
        description="Croupier: a gRPC card-game engine service with bots.",
        epilog="Every subcommand has --help. Flags default from CROUPIER_* variables.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    serve = sub.add_parser(
        "serve",
        help="run the gRPC server",
        description="Run the gRPC server until SIGTERM or Ctrl-C, then stop gracefully.",
    )
    _serve_flags(serve, defaults)
    serve.add_argument(
        "--grace",
        type=float,
        default=defaults.grace,
        help="seconds in-flight calls get on shutdown (env CROUPIER_GRACE; default %(default)s)",
    )
    serve.add_argument(
        "--fill-interval",
        type=float,
        default=defaults.fill_interval,
        help="seconds between looks for empty seats to hand to bots "
        "(env CROUPIER_FILL_INTERVAL; default %(default)s)",
    )
    serve.add_argument(
        "--store-check-seconds",
        type=float,
        default=defaults.store_check_seconds,
        help="seconds between checks that the store answers: readiness (the health of "
        "croupier.v1.Croupier) and croupier_store_up follow them (env "
        "CROUPIER_STORE_CHECK_SECONDS; default %(default)s)",
    )
    serve.add_argument(
        "--deal-pause-seconds",
        metavar="SECONDS",
        type=float,
        default=defaults.deal_pause_seconds,
        help="the pause between a deal's end and the next deal at tables where a person sits, "
        "so that the players see the end of the deal; every person ready (ReadyForNextDeal) "
        "ends it sooner, tables of bots alone never pause; 0 = none "
        "(env CROUPIER_DEAL_PAUSE_SECONDS; default %(default)s)",
    )
    serve.add_argument(
        "--poll-seconds",
        type=float,
        default=defaults.poll_seconds,
        help="seconds a waiting StreamTable looks at its table again when no change "
        "notification woke it (env CROUPIER_POLL_SECONDS; default %(default)s)",
    )
    serve.add_argument(
        "--drain",
        type=float,
        default=defaults.drain,
        help="seconds between SIGTERM (health NOT_SERVING, streams told to resume elsewhere) "
        "and refusing new calls, so balancers and probes see it first; keep drain + grace "
        "below Kubernetes' terminationGracePeriodSeconds (env CROUPIER_DRAIN; default "
        "%(default)s)",
    )
    serve.add_argument(
        "--metrics-port",
        type=int,
        default=defaults.metrics_port,
        help="serve Prometheus metrics at http://<listen host>:PORT/metrics; 0 = off "
        "(env CROUPIER_METRICS_PORT; default %(default)s)",
    )
    serve.add_argument(
        "--web-listen",
        default=defaults.web_listen,
        help="host:port where browsers reach the API over Connect / gRPC-Web and the web "
        "client; empty = off (env CROUPIER_WEB_LISTEN; `croupier run` uses "
        f"{DEFAULT_WEB_LISTEN})",
    )
    # `croupier run`'s pipe: "ready" is written there once every port listens (hidden)
    serve.add_argument("--ready-fd", type=int, default=-1, help=argparse.SUPPRESS)
    serve.add_argument(
        "--web-root",
        default=defaults.web_root,
        help="directory of the built web client served on the web port "
        "(env CROUPIER_WEB_ROOT; default: web/dist of this checkout)",
    )

    limits = serve.add_argument_group("limits", "refusals are RESOURCE_EXHAUSTED; see "
                                      "docs/operations.md")
    limits.add_argument(
        "--max-message-bytes", type=int, default=defaults.max_message_bytes,
        help="largest request accepted (env CROUPIER_MAX_MESSAGE_BYTES; default %(default)s)",
    )
    limits.add_argument(
        "--tables-per-client", type=int, default=defaults.tables_per_client,
        help="unfinished tables one client (API key, else address) may create; 0 = no limit "
        "(env CROUPIER_TABLES_PER_CLIENT; default %(default)s)",
    )
    limits.add_argument(
        "--streams-per-table", type=int, default=defaults.streams_per_table,
        help="open StreamTable calls per table; 0 = no limit (env CROUPIER_STREAMS_PER_TABLE; "
        "default %(default)s)",
    )
    limits.add_argument(
        "--move-rate", default=defaults.move_rate,
        help="SubmitMove calls per seat, e.g. '10/second'; empty = no limit "
        "(env CROUPIER_MOVE_RATE; default none)",
    )

    abandon = serve.add_argument_group(
        "abandoned tables", "a table no person sat at or came back to (any call with a seat "
        "token, or an open stream) for this long is closed as abandoned; see "
        "docs/operations.md")
    abandon.add_argument(
        "--abandon-waiting-after", metavar="SECONDS", type=float,
        default=defaults.abandon_waiting_seconds,
        help="for a table still waiting for seats; 0 = never "
        "(env CROUPIER_ABANDON_WAITING_SECONDS; default %(default)s)",
    )
    abandon.add_argument(
        "--abandon-playing-after", metavar="SECONDS", type=float,
        default=defaults.abandon_playing_seconds,
        help="for a table being played; 0 = never (env CROUPIER_ABANDON_PLAYING_SECONDS; "
        "default %(default)s)",
    )

    match = serve.add_argument_group("matchmaking", "FindMatch tickets; see docs/players.md")
    match.add_argument(
        "--match-bots-after", metavar="SECONDS|GAME=SECONDS", action="append",
        help="seconds a queue's oldest ticket waits before bots fill its table's other seats; "
        "repeat with GAME=SECONDS for one game (env CROUPIER_MATCH_BOTS_AFTER, comma-separated; "
        f"default {defaults.match_bots_after})",
    )
    match.add_argument(
        "--match-ticket-seconds", metavar="SECONDS", type=float,
        default=defaults.match_ticket_seconds,
        help="a ticket nobody asks about (GetTicket, WatchTicket) this long expires "
        "(env CROUPIER_MATCH_TICKET_SECONDS; default %(default)s)",
    )
    match.add_argument(
        "--match-window-base", metavar="RATING", type=float,
        default=defaults.match_window_base,
        help="rated: the spread of conservative ratings a table may seat at once "
        "(env CROUPIER_MATCH_WINDOW_BASE; default %(default)s)",
    )
    match.add_argument(
        "--match-window-growth", metavar="RATING", type=float,
        default=defaults.match_window_growth,
        help="rated: how much that spread widens per second waited "
        "(env CROUPIER_MATCH_WINDOW_GROWTH; default %(default)s)",
    )
    match.add_argument(
        "--match-interval", metavar="SECONDS", type=float, default=defaults.match_interval,
        help="seconds between the matcher's rounds (env CROUPIER_MATCH_INTERVAL; default "
        "%(default)s)",
    )
    players = serve.add_argument_group(
        "presence", "seats' presence and players' tables; see docs/players.md")
    players.add_argument(
        "--presence-seconds", metavar="SECONDS", type=float, default=defaults.presence_seconds,
        help="how often an open stream writes its seat's presence; a seat seen within two of "
        "these is connected (env CROUPIER_PRESENCE_SECONDS; default %(default)s)",
    )
    players.add_argument(
        "--gone-after", metavar="SECONDS", type=float, default=defaults.gone_seconds,
        help="a seat unseen this long is gone, before that away "
        "(env CROUPIER_GONE_SECONDS; default %(default)s)",
    )
    players.add_argument(
        "--my-tables-finished-days", metavar="DAYS", type=float,
        default=defaults.my_tables_finished_days,
        help="ListMyTables (include_finished) shows tables finished this many days ago at most "
        "(env CROUPIER_MY_TABLES_FINISHED_DAYS; default %(default)s)",
    )

    security = serve.add_argument_group("security", "see docs/operations.md")
    security.add_argument(
        "--api-keys", metavar="FILE", default=defaults.api_keys,
        help="API key file: CreateTable and bot seats then need a key ('x-api-key' metadata) "
        "(env CROUPIER_API_KEYS_FILE; default: no keys needed)",
    )
    security.add_argument(
        "--tls-cert", metavar="PEM", default=defaults.tls_cert,
        help="serve TLS with this certificate chain (env CROUPIER_TLS_CERT)",
    )
    security.add_argument(
        "--tls-key", metavar="PEM", default=defaults.tls_key,
        help="the certificate's private key (env CROUPIER_TLS_KEY)",
    )
    security.add_argument(
        "--tls-client-ca", metavar="PEM", default=defaults.tls_client_ca,
        help="mutual TLS: clients must present a certificate signed by this CA; such clients "
        "may take bot seats without an API key (env CROUPIER_TLS_CLIENT_CA)",
    )

    players = serve.add_argument_group("players", "identity tokens; see docs/players.md")
    players.add_argument(
        "--identity-jwks", metavar="URL|FILE", default=defaults.identity_jwks,
        help="trust this identity provider: its JWKS (https URL or file) "
        "(env CROUPIER_IDENTITY_JWKS; default: no provider)",
    )
    players.add_argument(
        "--identity-issuer", default=defaults.identity_issuer,
        help="the provider's issuer (iss) (env CROUPIER_IDENTITY_ISSUER)",
    )
    players.add_argument(
        "--identity-audience", default=defaults.identity_audience,
        help="the audience (aud) its tokens must name (env CROUPIER_IDENTITY_AUDIENCE)",
    )
    players.add_argument(
        "--identity-algorithms", default=defaults.identity_algorithms,
        help="asymmetric algorithms accepted, comma-separated (env "
        "CROUPIER_IDENTITY_ALGORITHMS; default %(default)s)",
    )
    players.add_argument(
        "--identity-player-claim", default=defaults.identity_player_claim,
        help="the claim naming the player (env CROUPIER_IDENTITY_PLAYER_CLAIM; default "
        "%(default)s)",
    )
    players.add_argument(
        "--identity-name-claim", default=defaults.identity_name_claim,
        help="the claim giving the display name (env CROUPIER_IDENTITY_NAME_CLAIM; default "
        "%(default)s)",
    )
    players.add_argument(
        "--identity-dev-secret-file", metavar="FILE", default=defaults.identity_dev_secret_file,
        help="development only: also accept HS256 tokens signed with the secret in FILE "
        "(env CROUPIER_IDENTITY_DEV_SECRET_FILE)",
    )
    players.add_argument(
        "--identity-refresh-seconds", type=float, metavar="S",
        default=defaults.identity_refresh_seconds,
        help="least time between two fetches of the JWKS when a token names an unknown key "
        "(env CROUPIER_IDENTITY_REFRESH_SECONDS; default %(default)s)",
    )
    players.add_argument(
        "--guests", choices=("on", "off"), default="on" if defaults.guests else "off",
        help="CreateGuest gives new guest players a token the server signs (env "
        "CROUPIER_GUESTS; default %(default)s)",
    )
    players.add_argument(
        "--guest-key-file", metavar="PEM", default=defaults.guest_key_file,
        help="Ed25519 private key(s) signing guest tokens, the first signs (env "
        "CROUPIER_GUEST_KEY_FILE; default: a key kept beside the SQLite file or in Redis)",
    )
    players.add_argument(
        "--guest-days", type=float, default=defaults.guest_days,
        help="a guest token's lifetime (env CROUPIER_GUEST_DAYS; default %(default)s)",
    )

    run = sub.add_parser(
        "run",
        help="run a server and a bot worker together: the quickest way to play",
        description="Start `croupier serve` and `croupier bots` as child processes; Ctrl-C or "
        "SIGTERM stops both.",
    )
    _serve_flags(run, defaults)
    run.add_argument(
        "--web-listen",
        # CROUPIER_WEB_LISTEN set but empty turns the web port off here too
        default=env("WEB_LISTEN", DEFAULT_WEB_LISTEN),
        help="host:port of the web client and Connect / gRPC-Web; empty = off "
        "(env CROUPIER_WEB_LISTEN, empty = off too; default %(default)s)",
    )
    run.add_argument(
        "--workers",
        type=int,
        default=int(env("BOT_WORKERS", "1")),
        help="bot worker processes (env CROUPIER_BOT_WORKERS; default %(default)s)",
    )

    for name, (_, _, text) in DISPATCH.items():
        sub.add_parser(name, help=text, add_help=False)
    return parser


def _dispatch(name: str, argv: list[str]) -> int:
    module_name, function, _ = DISPATCH[name]
    try:
        module = importlib.import_module(module_name)
        entry: Callable[[list[str]], int] = getattr(module, function)
    except (ImportError, AttributeError) as e:
        print(f"croupier {name} is not available in this installation: {e}", file=sys.stderr)
        return 2
    return int(entry(argv) or 0)


# the setting that moves each of the server's ports, for "in use" errors
PORT_SETTINGS = {
    "grpc": ("gRPC", "--listen", "CROUPIER_LISTEN"),
    "web": ("web", "--web-listen", "CROUPIER_WEB_LISTEN"),
    "metrics": ("metrics", "--metrics-port", "CROUPIER_METRICS_PORT"),
}


def _configure_logging(args: argparse.Namespace, command: str) -> bool:
    """Sets up logging for `croupier COMMAND`; False (said on stderr) if the file won't open."""
    from common import logging as service_logging

    try:
        service_logging.configure(args.log_level, log_file=args.log_file)
    except OSError as e:
        print(f"croupier {command}: cannot open the log file {args.log_file}: {e}",
              file=sys.stderr)
        return False
    return True


def _serve(args: argparse.Namespace) -> int:
    from common import logging as service_logging
    from service.server import AddressInUse, serve

    if not _configure_logging(args, "serve"):
        return 2
    log = service_logging.get_logger("croupier.server")
    config = ServeConfig(
        listen=args.listen, store=args.store, log_level=args.log_level, log_file=args.log_file,
        grace=args.grace, drain=args.drain, fill_interval=args.fill_interval,
        store_check_seconds=args.store_check_seconds,
        deal_pause_seconds=args.deal_pause_seconds,
        poll_seconds=args.poll_seconds, metrics_port=args.metrics_port,
        web_listen=args.web_listen, cors_origins=args.cors_origins, web_root=args.web_root,
        max_message_bytes=args.max_message_bytes, tables_per_client=args.tables_per_client,
        streams_per_table=args.streams_per_table, move_rate=args.move_rate,
        api_keys=args.api_keys, tls_cert=args.tls_cert, tls_key=args.tls_key,
        tls_client_ca=args.tls_client_ca, abandon_waiting_seconds=args.abandon_waiting_after,
        abandon_playing_seconds=args.abandon_playing_after,
        # the flags after the environment's: a plain one replaces its default, GAME=S add
        match_bots_after=",".join([defaults_bots_after(), *(args.match_bots_after or [])]),
        match_ticket_seconds=args.match_ticket_seconds,
        match_window_base=args.match_window_base,
        match_window_growth=args.match_window_growth, match_interval=args.match_interval,
        presence_seconds=args.presence_seconds, gone_seconds=args.gone_after,
        my_tables_finished_days=args.my_tables_finished_days,
        identity_jwks=args.identity_jwks, identity_issuer=args.identity_issuer,
        identity_audience=args.identity_audience,
        identity_algorithms=args.identity_algorithms,
        identity_player_claim=args.identity_player_claim,
        identity_name_claim=args.identity_name_claim,
        identity_dev_secret_file=args.identity_dev_secret_file,
        identity_refresh_seconds=args.identity_refresh_seconds, guests=args.guests == "on",
        guest_key_file=args.guest_key_file, guest_days=args.guest_days,
    )
    try:
        asyncio.run(serve(config, ready=_reporter(args.ready_fd)))
    except AddressInUse as e:
        label, flag, variable = PORT_SETTINGS[e.port]
        log.error(
            "cannot_serve",
            reason=f"cannot listen on {e.address} ({label}): it is in use; choose another "
            f"with {flag} or {variable}",
        )
        return 1
    except (OSError, ValueError) as e:
        log.error("cannot_serve", reason=str(e))
        return 1
    return 0


def defaults_bots_after() -> str:
    return ServeConfig.from_env().match_bots_after


def _reporter(fd: int) -> Callable[[], None] | None:
    """What tells `croupier run` that this server listens: "ready" on its pipe, then closed."""
    if fd < 0:
        return None

    def report() -> None:
        with contextlib.suppress(OSError):  # the parent gone: nobody to tell
            os.write(fd, READY)
        with contextlib.suppress(OSError):
            os.close(fd)

    return report


def _wait_ready(pipe: int, child: subprocess.Popen[bytes], stopping: Callable[[], bool],
                timeout: float = 30.0) -> bool:
    """Waits for the server child to say on `pipe` that its own ports listen: False if it
    exited (its reason, e.g. a port in use, is on stderr), the time ran out, or a signal came
    first. Only the child's word counts: another server answering on the same address (a
    second `croupier run`) must not pass for this one."""
    deadline = time.monotonic() + timeout
    told = b""
    while time.monotonic() < deadline and not stopping():
        readable, _, _ = select.select([pipe], [], [], 0.2)
        if readable:
            chunk = os.read(pipe, 64)
            if not chunk:  # the child closed it: exited, or ready said already
                return told == READY and child.poll() is None
            told += chunk
            if told == READY:
                return child.poll() is None
    return False


def _run(args: argparse.Namespace) -> int:
    from common import logging as service_logging

    if not _configure_logging(args, "run"):
        return 2
    log = service_logging.get_logger("croupier.run")
    log_file = ("--log-file", args.log_file) if args.log_file else ()
    me = [sys.executable, "-m", "service.cli"]
    stopping = False

    def on_signal(signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    address = client_address(args.listen)
    children: dict[str, subprocess.Popen[bytes]] = {}
    ready_pipe, ready_end = os.pipe()
    children["server"] = subprocess.Popen(
        [
            *me,
            "serve",
            "--listen",
            args.listen,
            "--log-level",
            args.log_level,
            "--web-listen",
            args.web_listen,
            "--cors-origins",
            args.cors_origins,
            "--ready-fd",
            str(ready_end),
            *log_file,
        ],
        pass_fds=(ready_end,),
        # a session of its own: Ctrl-C at the terminal reaches only this process, which stops
        # the children in order (bots first, so they give their seats back to a live server)
        start_new_session=True,
        # the store through the environment, not argv, which any local user may read (ps):
        # its URL may hold a password
        env={**os.environ, "CROUPIER_STORE": args.store},
    )
    os.close(ready_end)  # the child's now: EOF here once it exits
    code = 0
    try:
        web = client_address(args.web_listen) if args.web_listen else ""
        ready = _wait_ready(ready_pipe, children["server"], lambda: stopping)
        os.close(ready_pipe)
        if not ready:
            if stopping:  # Ctrl-C while it started
                return 0
            log.error("server_did_not_start", listen=args.listen, web_listen=args.web_listen)
            return 1
        children["bots"] = subprocess.Popen(
            [
                *me,
                "bots",
                "--server",
                address,
                "--workers",
                str(args.workers),
                "--log-level",
                args.log_level,
                *log_file,
            ],
            start_new_session=True,
        )
        game_hint = f"{croupier_command()} play {ENGINES[0]}"
        if args.listen != DEFAULT_LISTEN:
            game_hint += f" --server {address}"
        hint = f"in another terminal: {game_hint}"
        log.info("running", listen=args.listen, store=masked(args.store),
                 web_listen=args.web_listen,
                 how_to_play=hint)
        # also on stdout, whatever the log level, once both ports listen: this is what a
        # person at the terminal needs (the console then stays quiet: no line per call)
        print(f"Croupier is serving on {address}; {hint}  (Ctrl-C stops)", flush=True)
        if web:
            print(f"In a browser: http://{web}/", flush=True)
        if args.log_file:
            print(f"Every event, as JSON lines: {args.log_file}", flush=True)
        bots_reported = False
        while not stopping:
            if children["server"].poll() is not None:
                log.error("server_exited", code=children["server"].returncode)
                code = 1
                break
            bots = children["bots"]
            if bots.poll() is not None and not bots_reported:
                log.warning(
                    "bots_exited", code=bots.returncode, effect="tables wait for people only"
                )
                bots_reported = True
            time.sleep(0.2)
    finally:
        _stop_children(children, log)
    return code


def croupier_command() -> str:
    """How a person at this terminal runs `croupier`: the bare name when it is the one on
    their PATH, else the path of the script installed beside this Python (`.venv/bin/croupier`
    after `make run`, which does not activate the virtualenv)."""
    script = Path(sys.executable).parent / "croupier"
    if not script.exists():
        return "croupier"
    found = shutil.which("croupier")
    if found and Path(found).resolve() == script.resolve():
        return "croupier"
    try:
        return str(script.absolute().relative_to(Path.cwd()))
    except ValueError:
        return str(script.absolute())


def _stop_children(children: dict[str, subprocess.Popen[bytes]], log: Any) -> None:
    """SIGTERM to bots first (they give their seats back), then the server; SIGKILL stragglers."""
    for name in ("bots", "server"):
        child = children.get(name)
        if child is None or child.poll() is not None:
            continue
        child.send_signal(signal.SIGTERM)
        try:
            child.wait(timeout=45 if name == "bots" else 15)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        log.info("child_stopped", child=name, code=child.returncode)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if importlib.util.find_spec("grpc") is None:  # installed for the engines alone
        print(
            "croupier: the commands need the package's server extra: "
            "pip install 'croupier[server]' (or make run in a checkout)",
            file=sys.stderr,
        )
        return 2
    if argv and argv[0] in DISPATCH:
        return _dispatch(argv[0], argv[1:])
    args = build_parser().parse_args(argv)
    if args.command == "serve":
        return _serve(args)
    if args.command == "run":
        return _run(args)
    raise AssertionError(f"unhandled command {args.command}")


if __name__ == "__main__":
    sys.exit(main())
