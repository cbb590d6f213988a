"""The tournament report: Markdown, CSV and JSON tables and a PNG chart of the ratings."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bots.tournament import ratings, stats
from bots.tournament.entrants import is_outside, outside
from bots.tournament.results import Outcome
from bots.tournament.schedule import Seating


def build(meta: dict[str, Any], outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """The report of a finished run: the place where its seed is revealed (the deals can be
    recomputed from it, and each table's record holds its cards and commitments)."""
    seating = Seating(meta.get("filler", ""), bool(meta.get("shared_seats")))
    given = list(meta["entrants"])
    entrants = seating.participants(given)
    players = int(meta["players"])
    return {
        "game": meta["game"], "entrants": entrants, "players": players,
        "options": meta.get("options", {}), "seed": meta.get("seed", ""),
        "seed_drawn": bool(meta.get("seed_drawn")),
        "filler": seating.filler, "shared_seats": seating.shared,
        "seating": seating.note(given, players),
        "deals_planned": meta.get("deals", 0),
        "deals_complete": _complete_deals(outcomes, len(seating.arrangements(given, players))),
        "tables": len(outcomes),
        "entrants_summary": ratings.per_entrant(outcomes, players),
        "ratings": ratings.fit(outcomes, entrants),
        "pairwise": ratings.pairwise(outcomes, entrants),
        "move_seconds": meta.get("move_seconds", 0),
        "match_seconds": meta.get("match_seconds", 0),
        "entrant_stats": entrant_stats(outcomes, entrants),
        "outside_entrants": outside(entrants),
        "caveat": caveat(entrants),
    }


def entrant_stats(outcomes: Sequence[Outcome], entrants: list[str]) -> list[dict[str, Any]]:
    """How each entrant played, in --entrants order: summed over the tables whose results
    carry statistics (`tables`; results of older versions do not)."""
    summed = stats.per_entrant((o.seating, o.stats) for o in outcomes)
    rows = []
    for name in entrants:
        tables, c = summed.get(name, (0, stats.SeatStats()))
        rows.append({
            "entrant": name, "kind": "outside" if is_outside(name) else "level",
            "tables": tables, "decisions": c.decisions, "timeouts": c.timeouts,
            "illegal": c.illegal, "crashes": c.crashes,
            "mean_think_seconds": c.mean_think,
        })
    return rows


def caveat(entrants: list[str]) -> str:
    """The duplicate format's assumption that outside programs may break ('' when none play)."""
    others = outside(entrants)
    if not others:
        return ""
    return (f"Outside entrants ({', '.join(others)}) are programs of their own: they could "
            "carry memory between the seatings of one deal (every seating gets the same cards), "
            "which the duplicate format assumes they do not. Built-in levels keep nothing "
            "between tables.")


def _complete_deals(outcomes: Sequence[Outcome], need: int) -> int:
    counts: dict[int, int] = {}
    for o in outcomes:
        counts[o.deal] = counts.get(o.deal, 0) + 1
    return sum(1 for c in counts.values() if c >= need)


def markdown(rep: dict[str, Any]) -> str:
    lines = [
        f"# Tournament: {rep['game']}, {', '.join(rep['entrants'])}",
        "",
        f"{rep['deals_complete']} of {rep['deals_planned']} deals complete, {rep['tables']} "
        f"tables ({rep['players']} players, every deal played with every seating on the same "
        f"cards); options {json.dumps(rep['options'])}; seed {rep['seed']!r}"
        f"{' (drawn secretly for this run, revealed here)' if rep.get('seed_drawn') else ''}; "
        f"{_time_text(rep)}.",
        *(["", rep["seating"]] if rep.get("seating") else []),
        "",
        "| entrant | rating (Elo scale) | 95% CI | mean points per deal | 95% CI | win rate "
        "| 95% CI | seat-deals |",
        "|---|---:|---|---:|---|---:|---|---:|",
    ]
    by_name = {s["bot"]: s for s in rep["entrants_summary"]}
    for r in rep["ratings"]:
        s = by_name.get(r["entrant"])
        if s is None:
            continue
        lines.append(
            f"| {r['entrant']} | {r['rating']:+.0f} | {_interval(r['rating_ci95'])} | "
            f"{s['mean_points']:+.3f} | "
            f"[{s['points_ci95'][0]:+.3f}, {s['points_ci95'][1]:+.3f}] | {s['win_rate']:.3f} | "
            f"[{s['win_ci95'][0]:.3f}, {s['win_ci95'][1]:.3f}] | {s['seat_deals']} |"
        )
    lines += ["", "Pairwise (points per deal, a minus b, paired by deal):", "",
              "| a | b | deals | mean difference | 95% CI | p | significant at 5% |",
              "|---|---|---:|---:|---|---:|---|"]
    for p in rep["pairwise"]:
        ci = p["diff_ci95"]
        ci_text = f"[{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci[0] is not None else "n/a"
        lines.append(f"| {p['a']} | {p['b']} | {p['deals']} | {p['mean_diff']:+.3f} | "
                     f"{ci_text} | {p['p_value']:.4f} | {'yes' if p['significant'] else 'no'} |")
    lines += ["", "How each entrant played (from the tables' records):", "",
              "| entrant | kind | tables | decisions | timeouts | illegal answers | crashes "
              "| mean think time (s) |",
              "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in rep.get("entrant_stats", []):
        think = "n/a" if r["mean_think_seconds"] is None else f"{r['mean_think_seconds']:.3f}"
        lines.append(f"| {r['entrant']} | {r['kind']} | {r['tables']} | {r['decisions']} | "
                     f"{r['timeouts']} | {r['illegal']} | {r['crashes']} | {think} |")
    lines += ["", "Timeouts: moves the server's timer played, and late answers replaced by "
              "the client. Illegal answers: not a legal move, or not a move at all. Crashes: "
              "the bot raised or its program died. Each was answered with a default move."]
    if rep.get("caveat"):
        lines += ["", f"**Caveat:** {rep['caveat']}"]
    return "\n".join(lines) + "\n"


def _time_text(rep: dict[str, Any]) -> str:
    move, match = rep.get("move_seconds", 0), rep.get("match_seconds", 0)
    if not move:
        return "no time control"
    text = f"{move:g} s per move"
    return text + (f" plus a {match:g} s bank per seat for the match" if match else "")


def _interval(ci: list[float | None]) -> str:
    return "n/a" if ci[0] is None else f"[{ci[0]:+.0f}, {ci[1]:+.0f}]"


def chart(rep: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    rows = rep["ratings"][::-1]
    names = [r["entrant"] for r in rows]
    centre = [r["rating"] for r in rows]
    finite = [r["rating_ci95"][0] is not None for r in rows]
    lo = [r["rating"] - r["rating_ci95"][0] if ok else 0 for r, ok in zip(rows, finite, strict=True)]
    hi = [r["rating_ci95"][1] - r["rating"] if ok else 0 for r, ok in zip(rows, finite, strict=True)]
    fig, ax = plt.subplots(figsize=(6, 1 + 0.5 * len(rows)))
    ax.errorbar(centre, range(len(rows)), xerr=[lo, hi], fmt="o", capsize=4)
    ax.set_yticks(range(len(rows)), names)
    ax.axvline(0, color="grey", linewidth=0.5)
    ax.set_xlabel("Bradley-Terry rating (Elo scale) with 95% bootstrap interval")
    ax.set_title(f"{rep['game']}: {rep['deals_complete']} deals, {rep['tables']} tables")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write(rep: dict[str, Any], out: Path) -> list[Path]:
    """report.md, report.csv, report.json and ratings.png in `out`."""
    paths = [out / "report.md", out / "report.csv", out / "report.json", out / "ratings.png"]
    paths[0].write_text(markdown(rep))
    by_rating = {r["entrant"]: r for r in rep["ratings"]}
    by_stats = {r["entrant"]: r for r in rep["entrant_stats"]}
    counts = ["kind", "tables", "decisions", "timeouts", "illegal", "crashes",
              "mean_think_seconds"]
    with paths[1].open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["entrant", "rating", "rating_lo", "rating_hi", "seat_deals", "mean_points",
                    "points_lo", "points_hi", "win_rate", "win_lo", "win_hi", *counts])
        for s in rep["entrants_summary"]:
            r = by_rating.get(s["bot"], {"rating": "", "rating_ci95": ["", ""]})
            c = by_stats.get(s["bot"], {})
            w.writerow([s["bot"], r["rating"], *r["rating_ci95"], s["seat_deals"],
                        s["mean_points"], *s["points_ci95"], s["win_rate"], *s["win_ci95"],
                        *(("" if c.get(k) is None else c[k]) for k in counts)])
    paths[2].write_text(json.dumps(rep, indent=1))
    chart(rep, paths[3])
    return paths
