"""`croupier tournament` and `croupier tournament-merge`."""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import secrets
import sys
from pathlib import Path
from typing import Any

import grpc
from croupier.v1 import croupier_pb2_grpc as pb_grpc
from rich.console import Console

from bots.levels import LEVELS
from bots.progress import progress_bar
from bots.tournament import report
from bots.tournament.entrants import OUTSIDE_MOVE_SECONDS, move_seconds, outside
from bots.tournament.entrants import parse as parse_entrants
from bots.tournament.play import Runner, TournamentError, deals_left
from bots.tournament.results import ResultFile, merge
from bots.tournament.schedule import Seating, add_seating_flags, parse_shard, plan
from common.channel import add_key_flags, add_tls_flags, api_key_of, check_tls_files, open_channel
from engines.contract import option_argument
from engines.registry import ENGINES, get_game

DEFAULT_SERVER = "127.0.0.1:50051"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="croupier tournament",
        description="Bots against each other through a Croupier server, in duplicate "
        "format: every deal is played with every seating of the entrants on the same cards. "
        "Built-in levels are played by bot workers (`croupier bots`), outside entrants by "
        "their own programs (bot SDK, `croupier bot-bridge`): both must be running against "
        "the same server. Results are stored as they arrive: run the same command again to "
        "resume.",
    )
    p.add_argument("game", help=f"engine name: {', '.join(ENGINES)}")
    p.add_argument("--entrants", required=True,
                   help=f"comma-separated entrants: bot levels ({', '.join(LEVELS)}) and "
                   "outside entrants (ext:NAME, or any other name)")
    p.add_argument("--deals", type=int, required=True, help="distinct deals")
    p.add_argument("--server", default=os.environ.get("CROUPIER_SERVER", DEFAULT_SERVER),
                   help="server address (env CROUPIER_SERVER; default %(default)s)")
    p.add_argument("--players", type=int, default=0, help="default: the game's minimum")
    p.add_argument("--option", action="append", type=option_argument, default=[], metavar="NAME=VALUE",
                   help="a table option (repeatable; JSON values)")
    p.add_argument("--move-seconds", type=float, default=None, metavar="S",
                   help="time control: a seat that has not moved S seconds after the table's "
                   "last event is played for by the server (table option turn_seconds; "
                   f"default: none, or {OUTSIDE_MOVE_SECONDS:g} with outside entrants, so "
                   "that a program that died never stalls the tournament; 0: none)")
    p.add_argument("--match-seconds", type=float, default=0.0, metavar="B",
                   help="with --move-seconds: a per-seat bank of B seconds for the whole match, "
                   "drawn on by moves slower than S (table option match_seconds)")
    p.add_argument("--seed", default=None,
                   help="seed of the deals, to reproduce a run: whoever knows it can compute "
                   "every deal (default: a secret one of 128 bits, drawn for the --out folder, "
                   "kept in its result file and revealed in the report)")
    add_seating_flags(p)
    p.add_argument("--parallel", type=int, default=4, help="tables in flight at once")
    p.add_argument("--shard", default="0/1", metavar="I/N",
                   help="play only deals d with d mod N == I; results go to results-I-of-N.sqlite")
    p.add_argument("--out", type=Path, required=True, help="folder for results, records, report")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_key_flags(p, "with the 'tables' role")
    add_tls_flags(p)
    return p


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    game = get_game(args.game)
    entrants = parse_entrants(args.entrants)
    players = args.players or game.info.min_players
    if not game.info.min_players <= players <= game.info.max_players:
        raise ValueError(f"{args.game} is played by {game.info.min_players} to "
                         f"{game.info.max_players} players, not {players}")
    seating = Seating(args.filler, args.allow_shared_seats)
    seating.arrangements(entrants, players)  # ValueError: an outside entrant on two seats
    if "deck" in dict(args.option):
        raise ValueError("the tournament draws every deal's deck itself (from --seed); "
                         "--option deck is not allowed")
    if args.deals < 1:
        raise ValueError("--deals must be at least 1")
    move, match = _time_control(args, entrants)
    problem = check_tls_files(args.tls_ca, args.tls_cert, args.tls_key)
    if problem:
        raise ValueError(problem)
    return {"game": args.game, "entrants": entrants, "players": players,
            "options": dict(args.option), "deals": args.deals, "seed": args.seed,
            "move_seconds": move, "match_seconds": match, "filler": seating.filler,
            "shared_seats": seating.shared}


def _seed(meta: dict[str, Any], results: ResultFile) -> dict[str, Any]:
    """`meta` with its seed: the one given; else the one this folder's result file keeps
    (a run resumed); else a fresh secret one of 128 bits. `seed_drawn` says which, and `run`
    is a public random name for the run's tables (their option `label`), never derived
    from the seed."""
    stored = results.meta()
    if meta["seed"] is None:
        if stored.get("seed"):
            drawn = bool(stored.get("seed_drawn", False))
            return {**meta, "seed": stored["seed"], "seed_drawn": drawn,
                    "run": stored.get("run") or secrets.token_hex(6)}
        return {**meta, "seed": secrets.token_hex(16), "seed_drawn": True,
                "run": secrets.token_hex(6)}
    return {**meta, "seed_drawn": False, "run": stored.get("run") or secrets.token_hex(6)}


def seed_warning(entrants: list[str], seed_given: bool,
                 default: str = "a secret one is drawn and revealed in the report") -> str:
    """The warning for a seed given on the command line while outside entrants play ('' for
    none): whoever knows the seed can compute every deal, every seat's cards."""
    others = outside(entrants)
    if not seed_given or not others:
        return ""
    return (f"warning: --seed with outside entrants ({', '.join(others)}): anyone who knows or "
            "guesses the seed can compute every deal of this run, every seat's cards. Give a "
            f"seed only to reproduce a run; leave it out for a run that counts ({default}).")


def _time_control(args: argparse.Namespace, entrants: list[str]) -> tuple[float, float]:
    move = move_seconds(args.move_seconds, entrants, "turn_seconds" in dict(args.option))
    match = args.match_seconds
    for flag, value in (("--move-seconds", move), ("--match-seconds", match)):
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"{flag} must be a positive number of seconds, not {value:g}")
    if match and not move:
        raise ValueError("--match-seconds needs --move-seconds (the budget is drawn on by "
                         "moves slower than it)")
    given = dict(args.option)
    for flag, value, option in (("--move-seconds", args.move_seconds, "turn_seconds"),
                                ("--match-seconds", match, "match_seconds")):
        if value and option in given:
            raise ValueError(f"{flag} sets the table option {option}: give one of "
                             f"{flag} and --option {option}")
    return move, match


def _result_name(shard: tuple[int, int]) -> str:
    return "results.sqlite" if shard == (0, 1) else f"results-{shard[0]}-of-{shard[1]}.sqlite"


async def _play(args: argparse.Namespace, meta: dict[str, Any], results: ResultFile,
                shard: tuple[int, int]) -> int:
    """Plays the shard's matches not played yet; returns how many deals it completed."""
    done = results.done_keys()
    seating = Seating(meta.get("filler", ""), bool(meta.get("shared_seats")))
    everything = plan(meta["entrants"], meta["players"], meta["deals"], shard, seating)
    matches = [m for m in everything if m.key not in done]
    all_deals = {m.deal for m in everything}
    left = deals_left(matches)
    records_dir = args.out / "records"
    records_dir.mkdir(exist_ok=True)
    console = Console(stderr=True)
    others = outside(meta["entrants"])
    if others and matches:
        console.print(f"outside entrants {', '.join(others)}: their programs must be running "
                      "(bot SDK or `croupier bot-bridge --entrant NAME`); their tables wait "
                      "for them", highlight=False)
    finished_now = 0
    moves = 0
    with progress_bar("tables", console, disable=args.no_progress) as bar:
        # tables, not deals: a deal is done with its last seating, so a short run would show
        # 0 deals and no ETA until near its end; the moves show the first table moving
        task = bar.add_task(f"{meta['game']} {','.join(meta['entrants'])}",
                            total=len(everything), completed=len(everything) - len(matches),
                            before=len(everything) - len(matches), detail="")

        def show() -> None:
            deals = len(all_deals) - len(left)
            bar.update(task, detail=f"· {moves} moves · {deals}/{len(all_deals)} deals")

        def on_move() -> None:
            nonlocal moves
            moves += 1
            show()

        def on_done(match: Any) -> None:
            nonlocal finished_now
            left[match.deal] -= 1
            if left[match.deal] == 0:
                del left[match.deal]
                finished_now += 1
            bar.update(task, advance=1)
            show()

        show()
        async with open_channel(args.server, args.tls_ca, args.tls_cert, args.tls_key,
                                args.api_key) as channel:
            runner = Runner(pb_grpc.CroupierStub(channel), results, meta, records_dir,
                            args.parallel, on_done, on_move)
            await runner.run(matches)
    return finished_now


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.api_key = api_key_of(args)
        meta = _settings(args)
        shard = parse_shard(args.shard)
        args.out.mkdir(parents=True, exist_ok=True)
        results = ResultFile(args.out / _result_name(shard))
        meta = _seed(meta, results)
        results.claim_meta({**meta, "shard": list(shard)})
    except ValueError as e:
        print(f"croupier tournament: {e}", file=sys.stderr)
        return 2
    warning = seed_warning(meta["entrants"], args.seed is not None)
    if warning:
        print(warning, file=sys.stderr)
    try:
        asyncio.run(_play(args, meta, results, shard))
    except TournamentError as e:
        print(f"croupier tournament: {e}", file=sys.stderr)
        return 2
    except grpc.aio.AioRpcError as e:
        print(f"croupier tournament: {e.code().name}: {e.details()} (results so far are kept; "
              "run again to resume)", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("croupier tournament: interrupted; run the same command again to resume",
              file=sys.stderr)
        return 130
    finally:
        results.close()
    if shard != (0, 1):
        print(f"shard {shard[0]}/{shard[1]} done; merge the shards with "
              "`croupier tournament-merge --out DIR SHARD_DIRS...`")
        return 0
    return _report([args.out / _result_name(shard)], args.out)


def _report(paths: list[Path], out: Path) -> int:
    meta, outcomes = merge(paths)
    if not meta:
        print("croupier tournament: no results to report", file=sys.stderr)
        return 1
    rep = report.build(meta, outcomes)
    written = report.write(rep, out)
    print(report.markdown(rep))
    print("written: " + ", ".join(str(p) for p in written))
    return 0


def build_merge_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="croupier tournament-merge",
        description="Merge the result files of tournament shards (results*.sqlite, or folders "
        "holding them, searched with their subfolders) into one report in --out.",
    )
    p.add_argument("inputs", nargs="+", type=Path, metavar="RESULTS_OR_DIR")
    p.add_argument("--out", type=Path, required=True)
    return p


def merge_main(argv: list[str] | None = None) -> int:
    """`croupier tournament-merge`: one report from the result files of several shards."""
    args = build_merge_parser().parse_args(argv)
    try:
        args.out.mkdir(parents=True, exist_ok=True)
        return _report(args.inputs, args.out)
    except ValueError as e:
        print(f"croupier tournament-merge: {e}", file=sys.stderr)
        return 2
