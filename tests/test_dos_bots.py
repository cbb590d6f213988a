"""The Dos search reward: the round's points, not only who won it."""

from __future__ import annotations

import random

from bots.heuristics.dos import MARGIN_SCALE, choose, rewards
from engines.dos import GAME, DosState


def _rounds(players: int, count: int) -> list[tuple[tuple[int, ...], DosState]]:
    """(totals before, state at the end) of the first round of heuristic matches."""
    out = []
    rng = random.Random(1)
    for g in range(count):
        state = GAME.new_game(players, {}, seed=f"reward{g}")
        before = GAME.result(state).totals
        while GAME.deal_number(state) == 0 and not GAME.is_over(state):
            seat = sorted(GAME.to_act(state))[0]
            state = GAME.apply(state, seat, choose(GAME, state, seat, GAME.legal_moves(state, seat), rng))
        out.append((before, state))
    return out


def test_the_reward_grows_with_the_points_won() -> None:
    by_points = []
    for before, end in _rounds(2, 12):
        r = rewards(GAME, before, end)
        winner = end.history[-1].winner
        points = end.history[-1].points
        assert min(r) >= 0.0 and max(r) <= 1.0
        assert abs(sum(r) - 1.0) < 1e-9  # two players: one's margin is the other's loss
        assert r[winner] == min(1.0, 0.5 + points / (2 * MARGIN_SCALE))
        by_points.append((points, r[winner]))
    by_points.sort()
    assert by_points[0][0] < by_points[-1][0] and by_points[0][1] < by_points[-1][1]


def test_with_more_players_the_losers_share_the_margin() -> None:
    for before, end in _rounds(4, 6):
        r = rewards(GAME, before, end)
        winner = end.history[-1].winner
        assert r[winner] > 0.5
        assert all(x < 0.5 for s, x in enumerate(r) if s != winner)
