"""`croupier ladder`: keeps playing rated matches between entrants on a server's ladder.

A match is one deal played in every seating of a draw of the entrants (all of them when they
fit the table, else the least played first), through the tournament's Runner, on tables
carrying the table option `ladder`; then RateMatch rates it on the server, which keeps the
standings. The output folder holds a state file: the next deal number, the match begun, the
matches each entrant played. Killed and started again, the command finishes the begun match
on the tables it had created (never a deal twice) and goes on with new deal numbers; a match
the server rated already is not rated again (RateMatch answers already_rated).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import secrets
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import grpc
from croupier.v1 import croupier_pb2 as pb
from croupier.v1 import croupier_pb2_grpc as pb_grpc

from bots.tournament import entrants
from bots.tournament.cli import seed_warning
from bots.tournament.entrants import OUTSIDE_MOVE_SECONDS, move_seconds
from bots.tournament.entrants import outside as entrants_outside
from bots.tournament.play import Runner, TournamentError, retrying
from bots.tournament.results import ResultFile
from bots.tournament.schedule import Match, Seating, add_seating_flags
from common.channel import add_key_flags, add_tls_flags, api_key_of, check_tls_files, open_channel
from engines.contract import option_argument
from engines.registry import ENGINES, get_game

DEFAULT_SERVER = "127.0.0.1:50051"
STATE_FILE = "ladder.json"
NAME = entrants.NAME  # ladder names and seeds follow the entrant-name rule
# what the state file holds besides the matches: a folder serves one ladder, game and seed
SETTINGS = ("game", "ladder", "players", "seed")



class LadderError(Exception):
    """A setting or an answer the command cannot go on with; the message says why."""


def parse_entrants(text: str) -> list[str]:
    """'hard,ext:alice,bob' -> ['hard', 'alice', 'bob'], as tournaments read them."""
    try:
        return entrants.parse(text)
    except ValueError as e:
        raise LadderError(str(e)) from None


def draw(entrants: Sequence[str], players: int, played: dict[str, int],
         rng: random.Random) -> list[str]:
    """The entrants of the next match: all when they fit, else `players` of them, those who
    played the fewest matches first (ties drawn at random), in the order given."""
    if len(entrants) <= players:
        return list(entrants)
    order = sorted(entrants, key=lambda e: (played.get(e, 0), rng.random()))
    chosen = set(order[:players])
    return [e for e in entrants if e in chosen]


def match_id(state: dict[str, Any], deal: int, number: int, repeat: bool) -> str:
    """The match's id on the server: its ladder, game, the folder's run name and the deal
    (and, when deals repeat, its number in this folder), so that no two matches of the
    ladder share one. The run name is public and random, never the seed (folders from before
    it have none: their seed, which their match ids showed already, stands in)."""
    run = state.get("run") or state["seed"]
    base = f"{state['ladder']}/{state['game']}/{run}/deal-{deal}"
    return f"{base}/match-{number}" if repeat else base


class State:
    """The state file: written whole to a temporary file and renamed over the old one, so a
    kill at any moment leaves the old state or the new one."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / STATE_FILE
        self.data: dict[str, Any] = {}
        if self.path.exists():
            try:
                self.data = json.loads(self.path.read_text())
            except (OSError, ValueError) as e:
                raise LadderError(f"cannot read {self.path}: {e}") from None

    def claim(self, settings: dict[str, Any]) -> None:
        """Takes the settings of a new folder, or checks them against the stored ones."""
        if not self.data:
            self.data = {**settings, "next_deal": 0, "next_match": 0, "begun": None,
                         "played": {}, "rated": 0}
            self.save()
            return
        differs = [k for k in SETTINGS if settings[k] is not None and self.data[k] != settings[k]]
        if differs:
            shown = ", ".join(f"{k} {self.data[k]}" for k in differs if k != "seed")
            raise LadderError(
                f"{self.path} holds a ladder run with other settings ({', '.join(differs)}"
                f"{': ' + shown if shown else ''}); use another --out, or the same settings "
                "to go on with it")

    def save(self) -> None:
        """Written whole, readable by its owner only: it keeps the folder's secret seed."""
        tmp = self.path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(json.dumps(self.data, indent=1, sort_keys=True))
        os.replace(tmp, self.path)


def standings_text(ratings: Sequence[pb.Rating]) -> str:
    """The standings as a small table; equal ratings share a rank."""
    if not ratings:
        return "  (no rated matches yet)"
    lines = [f"  {'rank':>4}  {'entrant':<24} {'rating':>7}  {'mu ± sigma':>15}  {'matches':>7}"]
    rank = 0
    for i, r in enumerate(ratings):
        if i == 0 or round(r.ordinal, 6) != round(ratings[i - 1].ordinal, 6):
            rank = i + 1
        lines.append(f"  {rank:>4}  {r.entrant:<24} {r.ordinal:>7.1f}  "
                     f"{f'{r.mu:.1f} ± {r.sigma:.1f}':>15}  {r.matches:>7}")
    return "\n".join(lines)


class Ladder:
    def __init__(self, args: argparse.Namespace, state: State, stub: pb_grpc.CroupierStub,
                 entrants: list[str], options: dict[str, Any]) -> None:
        self.args = args
        self.state = state
        self.stub = stub
        self.entrants = entrants
        self.options = options  # the tables' options (ladder and timers included)

    def _begin(self, deal: int) -> dict[str, Any]:
        """Draws the next match and records it as begun before any table is made."""
        data = self.state.data
        number = data["next_match"]
        rng = random.Random(f"{data['seed']}/draw/{number}")
        entrants = draw(self.entrants, data["players"], data["played"], rng)
        begun = {"number": number, "deal": deal, "entrants": entrants,
                 "options": self.options,
                 "seating": {"filler": self.args.filler,
                             "shared": self.args.allow_shared_seats},
                 "match_id": match_id(data, deal, number, self.args.repeat_deals)}
        data["begun"] = begun
        data["next_match"] = number + 1
        if not self.args.repeat_deals:
            data["next_deal"] = max(data["next_deal"], deal + 1)
        self.state.save()
        return begun

    async def _play(self, begun: dict[str, Any]) -> list[str]:
        """Plays (or finishes) the match's tables; their ids."""
        data = self.state.data
        folder = self.args.out / "matches" / f"{begun['number']:06d}"
        (folder / "records").mkdir(parents=True, exist_ok=True)
        results = ResultFile(folder / "results.sqlite")
        try:
            run = data.get("run") or "x"
            meta = {"game": data["game"], "players": data["players"],
                    "options": begun["options"], "seed": data["seed"],
                    "label": f"l-{run}-m{begun['number']}"}
            chosen = begun.get("seating", {})
            seating = Seating(chosen.get("filler", ""), bool(chosen.get("shared", True)))
            try:
                arrangements = seating.arrangements(begun["entrants"], data["players"])
            except ValueError as e:
                raise LadderError(str(e)) from None
            everything = [Match(begun["deal"], s) for s in arrangements]
            done = results.done_keys()
            runner = Runner(self.stub, results, meta, folder / "records", self.args.parallel)
            await runner.run([m for m in everything if m.key not in done])
            outcomes = results.outcomes()
        finally:
            results.close()
        if len(outcomes) != len(everything):
            raise LadderError(f"match {begun['number']}: {len(outcomes)} of "
                              f"{len(everything)} tables finished")
        return [o.table_id for o in outcomes]

    async def _rate(self, begun: dict[str, Any], table_ids: list[str]) -> None:
        data = self.state.data
        request = pb.RateMatchRequest(ladder=data["ladder"], match_id=begun["match_id"],
                                      table_ids=table_ids)
        try:
            reply = await retrying(lambda: self.stub.RateMatch(request, timeout=30))
        except grpc.aio.AioRpcError as e:
            if e.code() != grpc.StatusCode.FAILED_PRECONDITION:
                raise
            raise LadderError(
                f"the server refused to rate match {begun['match_id']!r}: {e.details()} "
                "(another run with this seed may have used these deal numbers: use another "
                "--seed or --out)") from None
        for entrant in begun["entrants"]:
            data["played"][entrant] = data["played"].get(entrant, 0) + 1
        data["rated"] += 1
        data["begun"] = None
        self.state.save()
        again = " (rated before)" if reply.already_rated else ""
        print(f"match {begun['number']} (deal {begun['deal']}, {len(table_ids)} tables, "
              f"{', '.join(begun['entrants'])}) rated{again}", flush=True)

    async def standings(self) -> None:
        data = self.state.data
        request = pb.ListRatingsRequest(ladder=data["ladder"], game=data["game"])
        reply = await retrying(lambda: self.stub.ListRatings(request, timeout=30))
        print(f"ladder {data['ladder']} · {data['game']}:\n{standings_text(reply.ratings)}",
              flush=True)

    async def run(self) -> int:
        """Plays matches until --matches are rated by this run (none given: until stopped)."""
        rated = 0
        deal = 0 if self.args.repeat_deals else self.state.data["next_deal"]
        while self.args.matches is None or rated < self.args.matches:
            begun = self.state.data["begun"]
            if begun is None:
                begun = self._begin(deal)
                deal += 1
                print(f"match {begun['number']}: deal {begun['deal']}, "
                      f"{', '.join(begun['entrants'])}", flush=True)
            else:
                print(f"match {begun['number']}: finishing deal {begun['deal']}, begun before",
                      flush=True)
            table_ids = await self._play(begun)
            await self._rate(begun, table_ids)
            rated += 1
            await self.standings()
        return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="croupier ladder",
        description="Rated matches between entrants on a server's standing ladder: each match "
        "is one deal in every seating of the entrants drawn for it (duplicate format), rated "
        "by the server (OpenSkill). Bot workers (`croupier bots`) and the outside entrants' "
        "programs must be running against the same server. Stop it with Ctrl-C; run the "
        "same command again to go on.",
    )
    p.add_argument("game", help=f"engine name: {', '.join(ENGINES)}")
    p.add_argument("--entrants", required=True,
                   help="comma-separated entrants: bot levels, and outside entrants (ext:NAME "
                   "or a name that is no level)")
    p.add_argument("--out", type=Path, required=True, help="folder for the state and records")
    p.add_argument("--ladder", default="main", help="the ladder's name (default %(default)s)")
    p.add_argument("--matches", type=int, default=None,
                   help="rate this many matches, then stop (default: until stopped)")
    p.add_argument("--seed", default=None,
                   help="seed of the deals, to reproduce a folder's deals: whoever knows it can "
                   "compute every deal (default: a secret one of 128 bits, drawn once for the "
                   "folder and kept in its state file)")
    add_seating_flags(p)
    p.add_argument("--repeat-deals", action="store_true",
                   help="start again from deal 0 on every run instead of going on with new "
                   "deals (a fixed set of deals)")
    p.add_argument("--players", type=int, default=0, help="default: the game's minimum")
    p.add_argument("--option", action="append", type=option_argument, default=[],
                   metavar="NAME=VALUE", help="a table option (repeatable; JSON values)")
    p.add_argument("--move-seconds", type=float, default=None,
                   help="seconds per decision (table option turn_seconds; 0: no timer; "
                   f"default: none, or {OUTSIDE_MOVE_SECONDS:g} with outside entrants)")
    p.add_argument("--match-seconds", type=float, default=0.0,
                   help="a seat's time bank for the match beyond --move-seconds "
                   "(table option match_seconds)")
    p.add_argument("--parallel", type=int, default=4, help="tables in flight at once")
    p.add_argument("--server", default=os.environ.get("CROUPIER_SERVER", DEFAULT_SERVER),
                   help="server address (env CROUPIER_SERVER; default %(default)s)")
    add_key_flags(p, "with the 'tables' role")
    add_tls_flags(p)
    return p


def _settings(args: argparse.Namespace) -> tuple[dict[str, Any], list[str], dict[str, Any]]:
    """(the folder's settings, the entrants, the tables' options) from the command line."""
    try:
        game = get_game(args.game)
    except ValueError as e:
        raise LadderError(str(e)) from None
    entrants = parse_entrants(args.entrants)
    players = args.players or game.info.min_players
    if not game.info.min_players <= players <= game.info.max_players:
        raise LadderError(f"{args.game} is played by {game.info.min_players} to "
                          f"{game.info.max_players} players, not {players}")
    if not NAME.fullmatch(args.ladder):
        raise LadderError("--ladder is 1 to 40 of a-z, 0-9, '_', '.', '-', starting with a "
                          "letter or digit")
    if args.seed is not None and not NAME.fullmatch(args.seed):
        raise LadderError("--seed is 1 to 40 of a-z, 0-9, '_', '.', '-'")
    try:
        Seating(args.filler, args.allow_shared_seats).arrangements(
            entrants[:players], players)
    except ValueError as e:
        raise LadderError(str(e)) from None
    if args.matches is not None and args.matches < 1:
        raise LadderError("--matches must be at least 1")
    options = dict(args.option)
    for name in ("deck", "ladder", "turn_seconds", "match_seconds"):
        if name in options:
            raise LadderError(f"--option {name} is not allowed: the ladder sets it")
    move = move_seconds(args.move_seconds, entrants, False)
    if move < 0 or args.match_seconds < 0:
        raise LadderError("--move-seconds and --match-seconds may not be negative")
    if args.match_seconds and not move:
        raise LadderError("--match-seconds needs --move-seconds")
    options["ladder"] = args.ladder
    if move:
        options["turn_seconds"] = move
    if args.match_seconds:
        options["match_seconds"] = args.match_seconds
    problem = check_tls_files(args.tls_ca, args.tls_cert, args.tls_key)
    if problem:
        raise LadderError(problem)
    settings = {"game": args.game, "ladder": args.ladder, "players": players,
                "seed": args.seed}
    return settings, entrants, options


async def _main(args: argparse.Namespace, state: State, entrants: list[str],
                options: dict[str, Any]) -> int:
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()
    stopping = False

    def stop() -> None:
        nonlocal stopping
        stopping = True
        task.cancel()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop)
    try:
        async with open_channel(args.server, args.tls_ca, args.tls_cert, args.tls_key,
                                args.api_key) as channel:
            ladder = Ladder(args, state, pb_grpc.CroupierStub(channel), entrants, options)
            return await ladder.run()
    except asyncio.CancelledError:
        if not stopping:
            raise
        begun = state.data.get("begun")
        more = (f"; match {begun['number']} is begun: the next run finishes it"
                if begun else "")
        print(f"croupier ladder: stopped{more}", file=sys.stderr)
        return 0
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(ValueError, RuntimeError):
                loop.remove_signal_handler(sig)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.api_key = api_key_of(args)
    except ValueError as e:
        print(f"croupier ladder: {e}", file=sys.stderr)
        return 2
    try:
        settings, entrants, options = _settings(args)
        args.out.mkdir(parents=True, exist_ok=True)
        state = State(args.out)
        if settings["seed"] is None:
            settings["seed"] = state.data.get("seed") or secrets.token_hex(16)
        elif entrants_outside(entrants):
            print(seed_warning(entrants, True, "a secret one is drawn and kept in the folder"),
                  file=sys.stderr)
        state.claim(settings)
        if "run" not in state.data and state.data.get("next_match", 0) == 0:
            state.data["run"] = secrets.token_hex(6)  # public: the match ids name the folder
            state.save()
        return asyncio.run(_main(args, state, entrants, options))
    except (LadderError, TournamentError) as e:
        print(f"croupier ladder: {e}", file=sys.stderr)
        return 2
    except grpc.aio.AioRpcError as e:
        print(f"croupier ladder: {e.code().name}: {e.details()} (the state is kept: run "
              "again to go on)", file=sys.stderr)
        return 1
