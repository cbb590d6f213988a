"""Ratings with their uncertainty, from the outcomes of a duplicate tournament.

- per entrant: mean points per deal and win rate with 95% intervals (bots.arena's tally and
  Wilson interval);
- a Bradley-Terry rating on the Elo scale, fitted on every pairwise comparison of seats held
  by different entrants at one table (more points wins, equal is half a win), with 95%
  bootstrap intervals that resample whole deals (a deal's seatings stay together);
- pairwise significance: per deal, the difference of two entrants' mean points over that
  deal's tables; its mean over the deals, 95% interval and two-sided p-value.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from bots.arena import Record, tally
from bots.tournament.results import Outcome

ELO = 400 / math.log(10)  # ln-strength to Elo points
BOOTSTRAP = 400


def per_entrant(outcomes: Sequence[Outcome], players: int) -> list[dict[str, Any]]:
    records = [Record(o.deal, o.seating, o.scores, o.winners) for o in outcomes]
    rows = [s.summary() for s in tally(records, players).values()]
    return sorted(rows, key=lambda r: -r["mean_points"])


def _pair_counts(outcomes: Sequence[Outcome], index: dict[str, int]) -> np.ndarray:
    """wins[a, b]: how often a seat of a scored more than a seat of b (ties count half)."""
    wins = np.zeros((len(index), len(index)))
    for o in outcomes:
        for i, a in enumerate(o.seating):
            for j, b in enumerate(o.seating):
                if i < j and a != b:
                    ia, ib = index[a], index[b]
                    if o.scores[i] > o.scores[j]:
                        wins[ia, ib] += 1
                    elif o.scores[i] < o.scores[j]:
                        wins[ib, ia] += 1
                    else:
                        wins[ia, ib] += 0.5
                        wins[ib, ia] += 0.5
    return wins


def bradley_terry(wins: np.ndarray, prior: float = 0.5, iterations: int = 500) -> np.ndarray:
    """Elo-scale ratings (mean 0) by the MM algorithm. `prior` adds that many half-wins each
    way to every pair, so an entrant that never lost still gets a finite rating."""
    k = wins.shape[0]
    w = wins + prior * (1 - np.eye(k))
    games = w + w.T
    p = np.ones(k)
    for _ in range(iterations):
        denom = (games / (p[:, None] + p[None, :])).sum(axis=1)
        new = w.sum(axis=1) / denom
        new /= np.exp(np.log(new).mean())
        if np.allclose(new, p, rtol=1e-10, atol=0):
            p = new
            break
        p = new
    r = ELO * np.log(p)
    return r - r.mean()


def fit(outcomes: Sequence[Outcome], entrants: Sequence[str], seed: int = 0
        ) -> list[dict[str, Any]]:
    """Bradley-Terry ratings with 95% bootstrap intervals over deals."""
    index = {e: i for i, e in enumerate(entrants)}
    by_deal: dict[int, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        by_deal[o.deal].append(o)
    deals = sorted(by_deal)
    per_deal = [_pair_counts(by_deal[d], index) for d in deals]
    total = sum(per_deal, np.zeros((len(index), len(index))))
    point = bradley_terry(total)
    rng = np.random.default_rng(seed)
    samples = []
    if len(deals) > 1:
        stack = np.stack(per_deal)
        for _ in range(BOOTSTRAP):
            pick = rng.integers(0, len(deals), len(deals))
            samples.append(bradley_terry(stack[pick].sum(axis=0), iterations=200))
    bounds = np.percentile(np.array(samples), [2.5, 97.5], axis=0) if samples else None
    rows = [
        {"entrant": e, "rating": round(float(point[i]), 1),
         # one deal: nothing to resample, no interval
         "rating_ci95": [round(float(bounds[0][i]), 1), round(float(bounds[1][i]), 1)]
         if bounds is not None else [None, None],
         "comparisons": int(total[i].sum() + total[:, i].sum())}
        for e, i in index.items()
    ]
    return sorted(rows, key=lambda r: -r["rating"])


def pairwise(outcomes: Sequence[Outcome], entrants: Sequence[str]) -> list[dict[str, Any]]:
    """For every pair: the mean per-deal difference of points (a minus b), its 95% interval
    and the two-sided p-value of 'no difference' (normal approximation over deals)."""
    by_deal: dict[int, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for o in outcomes:
        for seat, e in enumerate(o.seating):
            by_deal[o.deal][e].append(o.scores[seat])
    rows = []
    for x, a in enumerate(entrants):
        for b in entrants[x + 1:]:
            diffs = np.array([np.mean(p[a]) - np.mean(p[b])
                              for p in by_deal.values() if p[a] and p[b]])
            n = len(diffs)
            mean = float(diffs.mean()) if n else 0.0
            se = float(diffs.std(ddof=1) / math.sqrt(n)) if n > 1 else math.inf
            if se == 0:
                p_value = 1.0 if mean == 0 else 0.0
            elif math.isfinite(se):
                p_value = math.erfc(abs(mean / se) / math.sqrt(2))
            else:
                p_value = 1.0
            half = 1.96 * se
            rows.append({
                "a": a, "b": b, "deals": n, "mean_diff": round(mean, 4),
                "diff_ci95": [round(mean - half, 4), round(mean + half, 4)]
                if math.isfinite(half) else [None, None],
                "p_value": round(p_value, 6), "significant": p_value < 0.05,
            })
    return rows
