"""`croupier bots`: worker processes that take the built-in levels' bot seats and play them.

A worker is the bot SDK's runner (bots.sdk) playing level bots: a `LevelBot` is a Bot whose
choose() is its level's policy (bots.policy), so the built-in levels and outside bots go
through one client loop. It takes seats of built-in levels only, never an outside entrant's.
Search is CPU-bound, so the command starts several processes (a supervisor restarts any that
dies); each one plays many tables concurrently on one event loop, one search at a time.

Workers outlive server restarts and stop cleanly on SIGTERM/SIGINT (the runner's duties: the
decision in hand is finished, the seats of unfinished tables are given back).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import math
import multiprocessing
import os
import random
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, replace

import structlog
from croupier.v1 import croupier_pb2

from bots import metrics
from bots.policy import DEFAULT_LEVEL, LEVELS, LevelPolicy, Policy, get_policy
from bots.sdk import Bot, SeatContext
from bots.sdk.net import DEFAULT_SERVER
from bots.sdk.pace import DEFAULT_FORCED_THINK, DEFAULT_THINK, Pace, format_range, parse_range
from bots.sdk.runner import DEFAULT_POLL, STOP_GRACE, Runner, RunnerSettings
from common import logging as bot_logging
from common.channel import add_key_flags, api_key_of, check_tls_files

log = structlog.get_logger("croupier.bots")

SEARCH_SHARE = 0.8  # of a decision's time left that a capped search may take
DEFAULT_METRICS_HOST = "127.0.0.1"  # metrics are for this host unless the operator opens them

__all__ = ["STOP_GRACE", "LevelBot", "Settings", "Worker", "build_parser", "main"]


@dataclass(frozen=True)
class Settings:
    """What every worker process needs; picklable so it crosses into spawned processes."""

    server: str
    workers: int = 1
    levels: frozenset[str] | None = None  # None: any level (unknown ones play random)
    poll: float = DEFAULT_POLL
    name: str = ""
    api_key: str = ""  # sent as x-api-key when claiming seats (servers with --api-keys)
    tls_ca: str = ""  # set: TLS, trusting this CA for the server's certificate
    tls_cert: str = ""  # with tls_key: the worker's client certificate (mutual TLS)
    tls_key: str = ""
    # think time at tables where a person sits (bots.sdk.pace): a move, a forced move
    think: tuple[float, float] = DEFAULT_THINK
    forced_think: tuple[float, float] = DEFAULT_FORCED_THINK

    def serves(self, level: str) -> bool:
        return self.levels is None or (level or DEFAULT_LEVEL) in self.levels

    def runner(self) -> RunnerSettings:
        """The SDK runner's settings: built-in levels, every seat at once."""
        return RunnerSettings(
            server=self.server, levels=self.levels, key=self.api_key, tls_ca=self.tls_ca,
            tls_cert=self.tls_cert, tls_key=self.tls_key, name=self.name, poll=self.poll,
            max_seats=0, pace=Pace(self.think, self.forced_think),
        )


class LevelBot(Bot):
    """A built-in level as a Bot: its policy decides; searches run in the runner's thread."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.blocking = bool(getattr(policy, "cpu_bound", False))
        self.rng = random.Random()

    @classmethod
    def for_seat(cls, seat: SeatContext) -> LevelBot:
        return cls(get_policy(seat.entrant))

    @property
    def last_iterations(self) -> int | None:
        """The last search's iterations (the runner logs them with the decision)."""
        return getattr(self.policy, "last_iterations", None)

    def choose(self, view: croupier_pb2.TableView, legal_moves: list[str],
               time_left: float) -> str:
        policy = self.policy
        if isinstance(policy, LevelPolicy) and policy.cpu_bound and math.isfinite(time_left):
            # a table's timer shorter than the level's own budget: search for what there is,
            # rather than have the runner play a random move for a late answer
            cap = max(0.01, time_left * SEARCH_SHARE)
            if policy.level.seconds is None or policy.level.seconds > cap:
                capped = LevelPolicy(replace(policy.level, seconds=cap))
                move = capped.choose(view, self.rng)
                policy.last_iterations = capped.last_iterations
                return move
        return policy.choose(view, self.rng)


class Worker(Runner):
    """One process: the SDK runner playing the levels' seats with level bots."""

    def __init__(self, settings: Settings, index: int = 0) -> None:
        super().__init__(LevelBot.for_seat, settings.runner(), index)
        self.worker_settings = settings


def _process_main(settings: Settings, index: int) -> None:
    """Entry point of a spawned worker process."""
    bot_logging.configure()
    try:
        code = asyncio.run(Worker(settings, index).run())
    except KeyboardInterrupt:  # a signal before the loop's handlers were installed
        code = 0
    except Exception:  # logged as one event, not as multiprocessing's plain traceback
        log.exception("worker_crashed", worker=index)
        code = 1
    sys.exit(code)


def _supervise(settings: Settings) -> int:
    """Run `settings.workers` processes; restart any that dies; stop them all on a signal."""
    ctx = multiprocessing.get_context("spawn")  # no grpc state crosses a fork
    stopping = False

    def on_signal(signum: int, _frame: object) -> None:
        nonlocal stopping
        if not stopping:
            log.info("supervisor_stopping", signal=signal.Signals(signum).name)
        stopping = True
        for proc in procs:
            if proc.is_alive() and proc.pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGTERM)

    def start(index: int) -> multiprocessing.process.BaseProcess:
        proc = ctx.Process(target=_process_main, args=(settings, index), name=f"croupier-bot-{index}")
        proc.start()
        return proc

    procs: list[multiprocessing.process.BaseProcess] = []
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    procs.extend(start(i) for i in range(settings.workers))
    log.info("supervisor_started", workers=settings.workers, server=settings.server)
    restarts: dict[int, float] = {}
    while not stopping:
        time.sleep(0.5)
        for index, proc in enumerate(procs):
            if stopping or proc.is_alive():
                continue
            # A crashed worker is replaced, at most once per few seconds per slot.
            if time.monotonic() - restarts.get(index, 0.0) < 5.0:
                continue
            log.warning("worker_died", worker=index, exitcode=proc.exitcode)
            restarts[index] = time.monotonic()
            procs[index] = start(index)
    deadline = time.monotonic() + STOP_GRACE + 10
    for proc in procs:
        proc.join(max(0.1, deadline - time.monotonic()))
        if proc.is_alive():
            log.warning("worker_killed", pid=proc.pid)
            proc.kill()
            proc.join(5)
    log.info("supervisor_stopped")
    return 0


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {value}")
    return value


def _think_range(text: str) -> tuple[float, float]:
    try:
        return parse_range(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="croupier bots",
        description="Bot workers: take the bot seats of Croupier tables and play them over gRPC.",
    )
    parser.add_argument(
        "--server",
        default=os.environ.get("CROUPIER_SERVER", DEFAULT_SERVER),
        help="server address host:port (env CROUPIER_SERVER; default %(default)s)",
    )
    parser.add_argument(
        "--workers",
        type=_positive_int,
        default=os.environ.get("CROUPIER_BOT_WORKERS", "1"),
        help="worker processes (env CROUPIER_BOT_WORKERS; default %(default)s)",
    )
    parser.add_argument(
        "--levels",
        default=os.environ.get("CROUPIER_BOT_LEVELS", ""),
        help=(
            "comma-separated bot levels to serve (env CROUPIER_BOT_LEVELS; default: any level, "
            f"unknown ones play random); known: {', '.join(sorted(LEVELS))}"
        ),
    )
    parser.add_argument(
        "--poll",
        type=_positive_float,
        default=os.environ.get("CROUPIER_BOT_POLL", str(DEFAULT_POLL)),
        help="seconds between lobby polls (env CROUPIER_BOT_POLL; default %(default)s)",
    )
    parser.add_argument(
        "--think-seconds",
        metavar="MIN-MAX",
        type=_think_range,
        default=os.environ.get("CROUPIER_BOT_THINK_SECONDS", format_range(DEFAULT_THINK)),
        help="at tables where a person sits, a move takes a random time in this range, its "
        "decision included (tables of bots alone: no wait); 0 = no wait "
        "(env CROUPIER_BOT_THINK_SECONDS; default %(default)s)",
    )
    parser.add_argument(
        "--forced-think-seconds",
        metavar="MIN-MAX",
        type=_think_range,
        default=os.environ.get(
            "CROUPIER_BOT_FORCED_THINK_SECONDS", format_range(DEFAULT_FORCED_THINK)),
        help="the same for a move that is the only legal one "
        "(env CROUPIER_BOT_FORCED_THINK_SECONDS; default %(default)s)",
    )
    parser.add_argument(
        "--name",
        default=os.environ.get("CROUPIER_BOT_NAME", ""),
        help="player name shown at the table (default: '<level> bot')",
    )
    parser.add_argument(
        "--metrics-port",
        type=int,
        default=int(os.environ.get("CROUPIER_BOT_METRICS_PORT", "0")),
        help="serve Prometheus metrics (decision latency) at http://HOST:PORT/metrics (HOST: "
        "--metrics-host); 0 = off (env CROUPIER_BOT_METRICS_PORT; default %(default)s)",
    )
    parser.add_argument(
        "--metrics-host",
        default=os.environ.get("CROUPIER_BOT_METRICS_HOST", DEFAULT_METRICS_HOST),
        help="the address the metrics endpoint binds: loopback unless chosen, like the "
        "server's --listen (0.0.0.0 in a container, for the scraper and the probe) (env "
        "CROUPIER_BOT_METRICS_HOST; default %(default)s)",
    )
    add_key_flags(parser, "with the 'bots' role")
    parser.add_argument(
        "--tls-ca",
        default=os.environ.get("CROUPIER_TLS_CA", ""),
        help="connect with TLS, trusting this CA certificate (PEM) (env CROUPIER_TLS_CA)",
    )
    parser.add_argument(
        "--tls-cert",
        default=os.environ.get("CROUPIER_BOT_TLS_CERT", ""),
        help="client certificate for mutual TLS (PEM; with --tls-key) (env CROUPIER_BOT_TLS_CERT)",
    )
    parser.add_argument(
        "--tls-key",
        default=os.environ.get("CROUPIER_BOT_TLS_KEY", ""),
        help="the client certificate's private key (env CROUPIER_BOT_TLS_KEY)",
    )
    parser.add_argument(
        "--log-level",
        default=os.environ.get("CROUPIER_LOG_LEVEL", "info"),
        choices=bot_logging.LEVELS,
        help="the console's (stderr's) level; on a terminal, per-decision and per-seat events "
        "count as debug (env CROUPIER_LOG_LEVEL; default %(default)s)",
    )
    parser.add_argument(
        "--log-file",
        metavar="PATH",
        default=os.environ.get("CROUPIER_LOG_FILE", ""),
        help="also append every event, debug included, to PATH as JSON lines "
        "(env CROUPIER_LOG_FILE; default none)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """`croupier bots`: exits 0 after a clean stop."""
    args = build_parser().parse_args(argv)
    try:
        bot_logging.configure(args.log_level, log_file=args.log_file)
    except OSError as e:
        print(f"croupier bots: cannot open the log file {args.log_file}: {e}", file=sys.stderr)
        return 2
    # spawned workers log the same way
    os.environ["CROUPIER_LOG_LEVEL"] = args.log_level
    os.environ["CROUPIER_LOG_FILE"] = args.log_file
    levels = frozenset(part.strip() for part in args.levels.split(",") if part.strip()) or None
    if levels:
        unknown = sorted(levels - set(LEVELS))
        if unknown:
            log.warning("unknown_levels_served_as_random", levels=unknown)
    problem = check_tls_files(args.tls_ca, args.tls_cert, args.tls_key)
    try:
        key = api_key_of(args)
    except ValueError as e:
        problem = str(e)
    if problem:
        print(f"croupier bots: {problem}", file=sys.stderr)
        return 2
    settings = Settings(
        server=args.server, workers=args.workers, levels=levels, poll=args.poll, name=args.name,
        api_key=key, tls_ca=args.tls_ca, tls_cert=args.tls_cert, tls_key=args.tls_key,
        think=args.think_seconds, forced_think=args.forced_think_seconds,
    )
    if settings.workers == 1:
        if args.metrics_port:
            try:
                metrics.serve_http(args.metrics_port, args.metrics_host.strip("[]"))
            except OSError as e:
                return _no_metrics(args.metrics_port, e)
        return asyncio.run(Worker(settings).run())
    if not args.metrics_port:
        return _supervise(settings)
    # several processes: each writes its samples to files the supervisor's endpoint sums
    path = tempfile.mkdtemp(prefix="croupier-bot-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = path  # inherited by the spawned workers
    try:
        try:
            metrics.serve_multiprocess(args.metrics_port, args.metrics_host.strip("[]"), path)
        except OSError as e:
            return _no_metrics(args.metrics_port, e)
        return _supervise(settings)
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _no_metrics(port: int, error: OSError) -> int:
    """One error event naming the setting to change, not a traceback; exit code 1."""
    what = "it is in use" if error.errno == errno.EADDRINUSE else str(error)
    log.error(
        "cannot_serve_metrics",
        reason=f"cannot listen on port {port} (bot metrics): {what}; choose another with "
        "--metrics-port or CROUPIER_BOT_METRICS_PORT",
    )
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
