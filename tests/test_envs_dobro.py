"""The Dobro codec: distinct actions for every legal move, observations from the view only.

Random play covers every player count, with and without manual_draw (calls, draws, ends);
scenarios pin concrete moves to the actions the module docstring documents.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.dobro import GAME, DobroState
from engines.envs.dobro import CODEC, NUM_ACTIONS
from engines.envs.registry import get_codec
from tests.dobro_support import by, legal, new, play
from tests.engine_kit import RandomPlay


def check_moves(state: DobroState, seat: int) -> dict[int, str]:
    """The seat's legal moves as distinct in-range actions named after them; action -> move."""
    n = state.players
    got: dict[int, str] = {}
    for move in GAME.legal_moves(state, seat):
        a = CODEC.action(state, seat, move)
        assert 0 <= a < NUM_ACTIONS
        assert a not in got, f"{move.text} and {got.get(a)} share action {a}"
        got[a] = move.text
        name = CODEC.action_name(a, n, {})
        if name.startswith("call +"):
            assert move.text == f"call {(seat + int(name[6:])) % n}"
        else:
            assert name == move.text
    return got


def check_observation(state: DobroState, seat: int | None, options: dict[str, Any],
                      rng: random.Random) -> np.ndarray:
    """Fixed shape, finite; equal for another state dealt from the same view (no leak)."""
    n = state.players
    view = GAME.view(state, seat)
    obs = CODEC.observe(view, n, options)
    assert obs.dtype == np.float32
    assert obs.shape == CODEC.observation_shape(n, options)
    assert np.isfinite(obs).all()
    assert obs.min() >= -1.0 and obs.max() <= 1.0
    if seat is not None and not GAME.is_over(state):
        other = GAME.sample(view, rng)
        assert GAME.view(other, seat) == view
        assert np.array_equal(CODEC.observe(GAME.view(other, seat), n, options), obs)
    return obs


def random_match(players: int, options: dict[str, Any], seed: int) -> int:
    """Plays one match at random, checking every acting seat's moves and every seat's
    observation."""
    rng = random.Random(seed)
    walk = RandomPlay(GAME, GAME.new_game(players, options, seed=str(seed)), rng)
    for state, _, _ in walk:
        for seat in GAME.to_act(state):
            check_moves(state, seat)
        for watcher in range(players):  # the environment observes waiting seats too
            check_observation(state, watcher, options, rng)
    check_observation(walk.state, 0, options, rng)
    check_observation(walk.state, None, options, rng)
    return walk.moves


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), manual=st.booleans(), rounds=st.sampled_from([1, 2]))
def test_random_play_actions_and_observations(
    players: int, seed: int, manual: bool, rounds: int
) -> None:
    assert random_match(players, {"rounds": rounds, "manual_draw": manual}, seed) > 0


def test_manual_draw_play_offers_calls_as_relative_actions() -> None:
    """A longer manual_draw match at random reaches calls, and every one encodes as a call."""
    seen: set[int] = set()
    for seed in range(4):
        rng = random.Random(seed)
        first = GAME.new_game(4, {"rounds": 1, "manual_draw": True}, seed=str(seed))
        for state, _, _ in RandomPlay(GAME, first, rng):
            for seat in GAME.to_act(state):
                seen.update(a for a in check_moves(state, seat) if a >= 60)
    assert seen <= {60, 61, 62} and seen, seen


def test_worked_example_of_the_docstring() -> None:
    state = new(4, ["2 3 3 4 4 5", "2 3 3 4 4 5", "9 3 3 4 4 5", "2 9 J J S R"], opener=2)
    state = play(state, "9")
    assert state.turn == 3 and state.value == 9
    actions = check_moves(state, 3)
    assert sorted(actions) == [0, 8, 30, 31, 32, 33, 41, *range(48, 56), 56, 57]
    assert actions[41] == "J+9" and actions[48] == "JJ:5" and actions[57] == "reverse"


def test_card_actions_are_stable_across_seats_and_states() -> None:
    state = new(3, ["7 7 J 2 3 4", "7 J J 9 10 11", "12 12 S 5 5 5"], opener=0)
    open0 = check_moves(state, 0)
    assert open0[6] == "7" and open0[17] == "77" and open0[39] == "J+7" and open0[28] == "J:7"
    assert 0 not in open0  # the opener may not pass
    state = play(state, "7")
    follow1 = check_moves(state, 1)
    assert follow1[0] == "pass" and follow1[6] == "7" and follow1[39] == "J+7"
    assert follow1[52] == "JJ:9"  # value 9: action 9 + 43
    state = play(state, "7")  # Dobro: 14
    assert state.value == 14
    follow2 = check_moves(state, 2)
    assert follow2 == {0: "pass", 22: "1212", 56: "skip"}


def test_calls_are_relative_to_the_calling_seat() -> None:
    hands = ["2 5 5 6 7 8", "6 3 3 4 4 5", "2 3 3 4 4 7", "2 2 3 4 4 8"]
    state = new(4, hands, opener=1, manual_draw=True)
    state = play(state, "6", "end")  # seat 1 ends its turn one card short: a forgetting
    assert state.forgetters == (1,) and state.turn == 2
    on_turn = check_moves(state, 2)
    assert on_turn[62] == "call 1"  # seat 2 calls the seat 3 places after it
    assert check_moves(state, 3) == {61: "call 1"}
    assert check_moves(state, 0) == {60: "call 1"}
    assert CODEC.action_name(61, 4, {}) == "call +2"
    called = by(state, 3, "call 1")
    assert called.oubli == 1
    obs = CODEC.observe(GAME.view(called, 3), 4, {})
    oubli_block = 42 + 19 * 4
    assert list(obs[oubli_block:oubli_block + 4]) == [0, 0, 1, 0]  # seat 1 is 2 after seat 3


def test_draw_and_end_actions() -> None:
    state = new(3, ["2 3 3 4 4 5", "6 3 3 4 4 5", "2 3 3 4 4 7"], opener=0, manual_draw=True)
    state = play(state, "5")
    assert check_moves(state, 0) == {58: "draw", 59: "end"}
    state = play(state, "draw")
    assert check_moves(state, 0) == {59: "end"}


def test_two_players_never_offer_reverse_and_see_no_unseen_reverse() -> None:
    state = new(2, ["2 3 3 4 4 S", "2 3 3 4 4 5"], opener=1)
    assert "reverse" not in legal(state)
    obs = CODEC.observe(GAME.view(state, 0), 2, {})
    assert obs[14 + 13] == 0.0  # no reverse card in the two-player deck
    assert obs[14 + 12] == pytest.approx(1 / 2)  # one of the two skip cards unseen
    assert obs[97 + 48] == pytest.approx(1.0)  # ten cards set aside


def test_observation_layout_of_a_position() -> None:
    hands = ["2 2 9 J S R", "3 3 4 4 5 5", "6 6 7 7 8 8", "10 10 11 11 12 12"]
    state = new(4, hands, opener=1)
    state = play(state, "3", "6", "1010")  # seats 1, 2, 3; seat 0 faces 20
    n = 4
    obs = CODEC.observe(GAME.view(state, 0), n, {})
    copies = np.array([5, 6, 6, 6, 6, 5, 4, 3, 3, 3, 3, 3, 2, 2])
    assert np.rint(obs[0:14] * copies).tolist() == [
        2, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1]
    o = 42 + 14 * n
    assert obs[o + 4 * n:o + 5 * n].tolist() == [1, 0, 0, 0]  # seat 0 on turn
    assert obs[o + 8 * n:o + 9 * n].tolist() == [0, 1, 0, 0]  # seat 1 opened the auction
    assert obs[o + 9 * n:o + 10 * n].tolist() == [0, 0, 0, 1]  # seat 3 moved last
    value = o + 10 * n
    assert state.value == 20 and obs[value + 20] == 1.0 and obs[value:value + 49].sum() == 1.0
    assert obs[value + 49] == pytest.approx(20 / 48)
    # seen from seat 2, the same position is rotated: seat 1 is three places after it
    rotated = CODEC.observe(GAME.view(state, 2), n, {})
    assert rotated[o + 8 * n:o + 9 * n].tolist() == [0, 0, 0, 1]
    assert rotated[o + 4 * n:o + 5 * n].tolist() == [0, 0, 1, 0]


def test_observation_changes_with_what_the_seat_knows() -> None:
    a = new(3, ["2 3 3 4 4 5", "6 3 3 4 4 5", "2 3 3 4 4 7"], opener=0)
    b = new(3, ["2 3 3 4 4 6", "5 3 3 4 4 5", "2 3 3 4 4 7"], opener=0)
    assert not np.array_equal(CODEC.observe(GAME.view(a, 0), 3, {}),
                              CODEC.observe(GAME.view(b, 0), 3, {}))
    # seat 2's cards are the same in both: its observation is too
    assert np.array_equal(CODEC.observe(GAME.view(a, 2), 3, {}),
                          CODEC.observe(GAME.view(b, 2), 3, {}))


def test_sizes_names_and_bad_input() -> None:
    assert get_codec("dobro") is CODEC
    for n in range(2, 7):
        assert CODEC.num_actions(n, {}) == NUM_ACTIONS == 65
        assert CODEC.observation_shape(n, {"manual_draw": True}) == (105 + 24 * n,)
        assert [CODEC.action_name(a, n, {}) for a in (0, 1, 11, 12, 23, 34, 45, 56, 58, 64)] == [
            "pass", "2", "12", "22", "J:2", "J+2", "JJ:2", "skip", "draw", "call +5"]
    names = [CODEC.action_name(a, 4, {}) for a in range(NUM_ACTIONS)]
    assert len(set(names)) == NUM_ACTIONS
    for bad in (-1, NUM_ACTIONS):
        with pytest.raises(ValueError):
            CODEC.action_name(bad, 4, {})
    for players in (1, 7):
        with pytest.raises(ValueError):
            CODEC.num_actions(players, {})
    state = new(3, ["2 3 3 4 4 5", "6 3 3 4 4 5", "2 3 3 4 4 7"], opener=0)
    with pytest.raises(ValueError):
        CODEC.action(state, 0, "9")
    with pytest.raises(ValueError):
        CODEC.observe(GAME.view(state, 0), 4, {})
