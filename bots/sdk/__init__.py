"""The bot SDK: write a `Bot`, and `run` plays it on a Croupier server as an entrant.

    from bots import sdk

    class First(sdk.Bot):
        blocking = False  # trivial: no thread needed
        def choose(self, view, legal_moves, time_left):
            return legal_moves[0]

    sdk.run(First, server="127.0.0.1:50051", entrant="first", key="...")

The runner finds the tables with a free seat reserved for the entrant, claims them with seat
tokens of its own (which never reach the bot), follows each seat's stream (resuming after a
server restart), asks the bot when the seat is to act and submits its answer. A bad answer is
replaced by the bot's `default_move` (a random legal move) with the reason recorded by the
server: `crashed` (choose raised), `garbage` (not a string), `illegal` (not a move the
server takes), `late` (no answer by the deadline minus a margin). SIGINT/SIGTERM stop `run`
gracefully: the decision in hand is finished, the seats of unfinished tables are given back.

`croupier bots` is this same runner with the built-in levels as bots (bots.worker).
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from bots.sdk.bot import Bot, SeatContext
from bots.sdk.decide import CRASHED, GARBAGE, ILLEGAL, LATE, Fallback
from bots.sdk.net import DEFAULT_SERVER
from bots.sdk.runner import (
    LEVEL_NAMES,
    BotSource,
    KeyRefused,
    Runner,
    RunnerSettings,
)
from common.channel import load_key

__all__ = [
    "CRASHED",
    "DEFAULT_SERVER",
    "GARBAGE",
    "ILLEGAL",
    "LATE",
    "LEVEL_NAMES",
    "Bot",
    "BotSource",
    "Fallback",
    "KeyRefused",
    "RunnerSettings",
    "SeatContext",
    "run",
    "serve",
    "settings_of",
]


def settings_of(server: str, entrant: str, key: str, options: dict[str, Any]) -> RunnerSettings:
    """The settings `serve` and `run` play with: `options` are RunnerSettings' other fields
    (tls_ca, tls_cert, tls_key, name, poll, max_seats, threads, margin, levels, pace) and
    `key_file`. TypeError for an unknown option; ValueError for a key file that won't read or
    a bad setting, before any call."""
    options = dict(options)
    key = load_key(key, options.pop("key_file", ""))
    settings = RunnerSettings(server=server, entrant=entrant, key=key, **options)
    problem = settings.check()
    if problem:
        raise ValueError(problem)
    return settings


async def serve(
    bot: BotSource,
    server: str = DEFAULT_SERVER,
    entrant: str = "",
    key: str = "",
    *,
    stop: asyncio.Event | None = None,
    **options: Any,
) -> None:
    """Plays `bot` until `stop` is set (None: until SIGINT/SIGTERM, or cancelled), then gives
    the unfinished seats back. `bot`: a Bot (shared by every seat), a Bot class (one instance
    per seat) or a function of the SeatContext making the seat's Bot. `entrant`: the outside
    entrant to play as (a built-in level's name: that level's seats). `key`: the API key; if
    "", the one in the `key_file` option, else env CROUPIER_API_KEY_FILE's file, else env
    CROUPIER_API_KEY. `options`: see `settings_of` (`threads`: blocking decisions at once).
    Bad settings raise ValueError before any call; a key the server refuses stops it with
    KeyRefused."""
    settings = settings_of(server, entrant, key, options)
    await Runner(bot, settings).run(stop=stop, signals=stop is None)


def run(
    bot: BotSource,
    server: str = DEFAULT_SERVER,
    entrant: str = "",
    key: str = "",
    *,
    log_level: str = "",
    **options: Any,
) -> int:
    """`serve` as a program: sets up logging (JSON lines, or readable on a terminal), blocks
    until SIGINT/SIGTERM, and answers an exit code (0 after a clean stop, 2 for bad settings,
    3 when the server refuses the key)."""
    from common import logging as bot_logging

    bot_logging.configure(log_level or None)
    try:
        settings = settings_of(server, entrant, key, options)
    except ValueError as e:
        print(f"bot: {e}", file=sys.stderr)
        return 2
    try:
        return asyncio.run(Runner(bot, settings).run())
    except KeyRefused as e:
        print(f"bot: {e}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:  # before the loop's handlers were in place
        return 0
