"""The Dos search reward: the round's points, not only who won it."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import pytest

from bots.heuristics.dos import choose, rewards
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


class _Totals:
    """A stand-in game whose result holds the given totals (the state is the totals)."""

    def result(self, state: Any) -> SimpleNamespace:
        return SimpleNamespace(totals=state)


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        # a seat's reward is 1/2 + (its gain less the others' mean gain) / 100, within [0, 1]:
        # a margin of 50 points is a reward of 1 (hand-computed below)
        ((0, 0), (30, 0), (0.8, 0.2)),                  # margins +30, -30
        ((12, 40), (12, 47), (0.43, 0.57)),             # only the gains count: +7 for seat 1
        ((0, 0), (0, 70), (0.0, 1.0)),                  # +70 is capped at 1, -70 at 0
        ((0, 0, 0), (0, 0, 12), (0.44, 0.44, 0.62)),    # others: 0 - 12/2 = -6
        ((0, 0, 0, 0), (0, 24, 0, 0), (0.42, 0.74, 0.42, 0.42)),  # others: 0 - 24/3 = -8
        ((10, 0, 5, 0), (10, 0, 5, 60), (0.3, 0.3, 0.3, 1.0)),    # -20 each; +60 capped
        ((0, 0), (0, 0), (0.5, 0.5)),                   # nothing won: even
    ],
)
def test_rewards_by_hand(before: tuple[int, ...], after: tuple[int, ...],
                         expected: tuple[float, ...]) -> None:
    assert rewards(_Totals(), before, after) == pytest.approx(list(expected))  # type: ignore[arg-type]


def test_the_reward_grows_with_the_points_won() -> None:
    by_points = []
    for before, end in _rounds(2, 12):
        r = rewards(GAME, before, end)
        winner = end.history[-1].winner
        points = end.history[-1].points
        assert min(r) >= 0.0 and max(r) <= 1.0
        assert abs(sum(r) - 1.0) < 1e-9  # two players: one's margin is the other's loss
        assert r[winner] > 0.5 if points > 0 else r[winner] == 0.5
        by_points.append((points, r[winner]))
    by_points.sort()
    assert len({p for p, _ in by_points}) >= 5  # rounds of different sizes were compared
    for (p1, r1), (p2, r2) in zip(by_points, by_points[1:], strict=False):
        assert r1 <= r2 and (p1 == p2 or r1 < r2 or r1 == 1.0)  # more points, more reward


def test_with_more_players_the_losers_share_the_margin() -> None:
    for before, end in _rounds(4, 6):
        r = rewards(GAME, before, end)
        winner = end.history[-1].winner
        assert r[winner] > 0.5
        assert all(x < 0.5 for s, x in enumerate(r) if s != winner)
        losers = [x for s, x in enumerate(r) if s != winner]
        assert max(losers) - min(losers) < 1e-9  # only the winner scores: the losers are even


def test_the_heuristic_matches_while_it_can_and_then_ends_the_turn() -> None:
    # the engine no longer ends a turn with nothing left but `end` (seeds/dos.md): the
    # players do, and the heuristic player must neither stop early nor stall
    from tests.dos_support import FILLER, play, table, two_left

    rng = random.Random(3)
    s = play(table(["b4 b7 b10 r10 y1 y8 y10", FILLER], "r7 y9", "b1 b3"), 0, "b7 on r7")
    assert choose(GAME, s, 0, GAME.legal_moves(s, 0), rng).text == "y1+y8 on y9"
    s = play(s, 0, "y1+y8 on y9")  # a double colour match: one bonus card owed
    add = choose(GAME, s, 0, GAME.legal_moves(s, 0), rng)
    assert add.text.startswith("add ")
    s = GAME.apply(s, 0, add)
    assert choose(GAME, s, 0, GAME.legal_moves(s, 0), rng).text == "end"
    s = two_left()
    assert choose(GAME, s, 0, GAME.legal_moves(s, 0), rng).text == "end dos"


def test_a_decision_with_one_candidate_takes_no_search() -> None:
    from bots.levels import get_level
    from tests.dos_support import two_left

    s = two_left()  # `end` or `end dos`: the candidates keep the call alone
    move, stats = get_level("medium").choose(GAME, GAME.view(s, 0), 0, random.Random(1))
    assert move.text == "end dos" and stats is not None and stats.iterations == 0
