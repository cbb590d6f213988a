"""The Doppelkopf codec: every legal move an action of its own, observations from the view
only (a state sampled from the view observes the same), and concrete moves and features."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.doppelkopf import GAME, parse_move
from engines.envs import doppelkopf as dk
from engines.envs.doppelkopf import CODEC
from engines.envs.registry import get_codec
from tests.doppelkopf_support import DEAL_A, healthy, new, play
from tests.engine_kit import RandomPlay

# every option set that changes the moves or the view (two deals: the second deal of a
# session, and in Bistro its deck built from the first deal's tricks)
OPTION_SETS: list[dict[str, Any]] = [
    {"deals": 2},
    {"deals": 2, "bistro": True},
    {"deals": 2, "duel": True},
    {"deals": 2, "tournament": True},
]


def _check_moves(state: Any, seat: int, opts: dict[str, Any]) -> None:
    moves = GAME.legal_moves(state, seat)
    actions = [CODEC.action(state, seat, m) for m in moves]
    n = CODEC.num_actions(4, opts)
    assert all(0 <= a < n for a in actions), (moves, actions)
    assert len(set(actions)) == len(actions), (moves, actions)
    assert [CODEC.action_name(a, 4, opts) for a in actions] == [m.text for m in moves]


def _observe(state: Any, seat: int | None, opts: dict[str, Any]) -> np.ndarray:
    obs = CODEC.observe(GAME.view(state, seat), 4, opts)
    assert obs.shape == CODEC.observation_shape(4, opts)
    assert obs.dtype == np.float32
    assert np.isfinite(obs).all()
    return obs


def _random_session(opts: dict[str, Any], seed: int) -> tuple[int, int]:
    """Play a session at random, checking moves and observations of every state on the way
    (spectators' too); every few states a state sampled from a seat's view must observe the
    same. Returns the states played and how many samples dealt the hidden cards otherwise
    (the check is only worth something if the samples do differ from the truth)."""
    rng = random.Random(seed)
    walk = RandomPlay(GAME, GAME.new_game(4, opts, seed=f"envs-dk-{seed}"), rng)
    differ = 0
    for state, _, _ in walk:
        for seat in GAME.to_act(state):
            _check_moves(state, seat, opts)
        for seat in range(4):
            obs = _observe(state, seat, opts)
            if rng.random() < 0.08:
                other = GAME.sample(GAME.view(state, seat), rng)
                assert np.array_equal(obs, _observe(other, seat, opts)), (walk.moves, seat)
                differ += other.hands != state.hands
        _observe(state, None, opts)
    for viewer in (0, 1, 2, 3, None):
        _observe(walk.state, viewer, opts)
    return walk.moves, differ


@pytest.mark.parametrize("opts", OPTION_SETS, ids=lambda o: "-".join(sorted(o)))
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_random_play_moves_are_distinct_actions_and_views_observe_alike(
    opts: dict[str, Any], seed: int
) -> None:
    steps, differ = _random_session(opts, seed)
    assert steps > 0 and differ > 0


def test_random_play_reaches_solos_marriages_and_announcements() -> None:
    # the random sessions above are only worth something if they reach the rarer moves
    seen: set[int] = set()
    for seed in range(12):
        rng = random.Random(seed)
        opts = {"deals": 2, "bistro": seed % 2 == 0}
        for state, seat, move in RandomPlay(GAME, GAME.new_game(4, opts, f"cover-{seed}"), rng):
            seen.add(CODEC.action(state, seat, move))
    assert {24, 25, 38, 43, 48} <= seen
    assert any(dk.SOLO_BASE <= a < dk.RE_BASE for a in seen)


def test_every_action_names_a_move_that_maps_back() -> None:
    names = [CODEC.action_name(a, 4, {}) for a in range(CODEC.num_actions(4, {}))]
    assert len(set(names)) == len(names) == 49
    for a, name in enumerate(names):
        assert dk._ACTION[parse_move(name)] == a
    with pytest.raises(ValueError, match="0-48"):
        CODEC.action_name(49, 4, {})
    with pytest.raises(ValueError, match="0-48"):
        CODEC.action_name(-1, 4, {})
    with pytest.raises(ValueError, match="not a Doppelkopf move"):
        CODEC.action(None, 0, "Qc")


def test_layout_of_the_action_space() -> None:
    name = {a: CODEC.action_name(a, 4, {}) for a in range(49)}
    assert (name[0], name[3], name[13], name[18], name[23]) == ("Ac", "Qc", "Th", "Ad", "9d")
    assert (name[24], name[25], name[26]) == ("healthy", "reservation", "marriage")
    assert (name[27], name[33], name[37]) == ("solo diamonds", "solo aces", "solo pure diamonds")
    assert (name[38], name[39], name[42]) == ("re", "re no 90", "re schwarz")
    assert (name[43], name[47], name[48]) == ("kontra", "kontra schwarz", "pass")


def test_codec_is_registered_and_only_for_four_players() -> None:
    assert get_codec("doppelkopf") is CODEC
    assert CODEC.observation_shape(4, {"bistro": True}) == (dk.OBS_SIZE,)
    with pytest.raises(ValueError, match="exactly 4"):
        CODEC.num_actions(3, {})
    with pytest.raises(ValueError, match="exactly 4"):
        CODEC.observation_shape(5, {})


def _actions(state: Any, seat: int) -> list[int]:
    return [CODEC.action(state, seat, m) for m in GAME.legal_moves(state, seat)]


def test_reservations_and_declarations_scenario() -> None:
    s = new(DEAL_A)  # seat 0 holds both club queens
    assert _actions(s, 0) == [24, 25]
    s = play(s, "0:reservation", "1:healthy", "2:healthy", "3:healthy")
    assert _actions(s, 0) == [26, *range(27, 34)]  # marriage, the seven solos (no pure ones)
    b = new({0: "Qc Qc"}, bistro=True)
    b = play(b, "0:reservation", "1:healthy", "2:healthy", "3:healthy")
    assert _actions(b, 0) == [26, *range(27, 38)]  # Bistro adds the four pure solos
    assert [CODEC.action_name(a, 4, {}) for a in _actions(b, 0)][-1] == "solo pure diamonds"
    s = play(s, "0:solo queens")
    obs = CODEC.observe(GAME.view(s, 1), 4, {})
    # seat 0 is seat 1's relative seat 3: its reservation and its solo (action 31)
    assert obs[dk.O_CALLS + 3 * dk.N_CALLS + 25 - 24] == 1.0
    assert obs[dk.O_CALLS + 3 * dk.N_CALLS + 31 - 24] == 1.0
    assert obs[dk.O_CALLS + 0 * dk.N_CALLS + 24 - 24] == 1.0  # seat 1 itself said healthy
    assert obs[dk.O_CONTRACT + 6] == 1.0 and obs[dk.O_DECLARER + 3] == 1.0


def test_card_play_announcements_and_pass_scenario() -> None:
    s = healthy(new(DEAL_A))  # a silent marriage: seat 0 holds both club queens and leads
    # seat 0's card kinds Ac Qc As Ah Th Kd (each held twice, one action each), then
    # re ... re schwarz
    assert _actions(s, 0) == [0, 3, 6, 12, 13, 20, 38, 39, 40, 41, 42]
    # seat 2 is asked out of turn: it could announce for either party, so kontra... and pass
    assert _actions(s, 2) == [43, 44, 45, 46, 47, 48]
    s = play(s, "0:re", "2:pass", "Qc")
    obs = CODEC.observe(GAME.view(s, 1), 4, {})
    row = 3 * dk.N_KINDS  # seat 0 seen from seat 1
    assert obs[dk.O_TRICK + row + 3] == 1.0 and obs[dk.O_TRICK:dk.O_LEADER].sum() == 1.0
    assert obs[dk.O_PLAYED + row + 3] == 0.5
    assert obs[dk.O_LEADER + 3] == 1.0 and obs[dk.O_TURN + 0] == 1.0
    assert obs[dk.O_ANNS + 3 * dk.N_ANNS + 0] == 1.0  # seat 0 said re
    assert obs[dk.O_PASSED + 1] == 1.0  # seat 2 (relative 1) passed in this trick
    assert obs[dk.O_RE_LEVEL + 1] == 1.0 and obs[dk.O_KONTRA_LEVEL + 0] == 1.0
    assert obs[dk.O_PARTIES + 3 * 3 + 1] == 1.0  # seat 0 is known Re
    assert obs[dk.O_FOLLOW + 4] == 1.0  # trump led
    own = CODEC.observe(GAME.view(s, 0), 4, {})
    assert own[dk.O_HAND + 3] == 0.5  # one club queen left of two
    assert own[dk.O_SEAT + 0] == 1.0 and own[dk.O_SIZES] == 11 / 12


def test_finished_trick_scenario() -> None:
    s = healthy(new(DEAL_A))
    s = play(s, "Ac", "Tc", "Kc", "Jh")  # seat 3 trumps the club ace with a jack
    obs = CODEC.observe(GAME.view(s, 0), 4, {})
    assert obs[dk.O_LAST_WINNER + 3] == 1.0
    assert obs[dk.O_LAST + 3 * dk.N_KINDS + 16] == 1.0  # Jh: hearts (2) * 6 + jack (4)
    assert obs[dk.O_POINTS + 3] == pytest.approx((11 + 10 + 4 + 2) / 240)
    assert obs[dk.O_WON + 3] == pytest.approx(1 / 12)
    assert obs[dk.O_VOIDS + 3 * 5 + 0] == 1.0  # seat 3 showed it has no clubs
    assert obs[dk.O_TRICK:dk.O_LEADER].sum() == 0.0  # the open trick is empty again


def test_bistro_solo_swines_and_duel_scenarios() -> None:
    b = new({0: "Qc Qc"}, bistro=True)
    solo = play(b, "0:reservation", "1:healthy", "2:healthy", "3:healthy", "0:solo pure hearts")
    obs = CODEC.observe(GAME.view(solo, 2), 4, {"bistro": True})
    assert obs[dk.O_RE_LEVEL + 2] == 1.0  # the solo stands at re no 90 without a move
    assert obs[dk.O_CONTRACT + 11] == 1.0 and obs[dk.O_DECLARER + 2] == 1.0
    assert obs[dk.O_TURN + 2] == 1.0  # in Bistro the soloist leads
    swine = healthy(new({0: "Qs", 1: "Ad Ad"}, bistro=True))
    before = CODEC.observe(GAME.view(swine, 3), 4, {"bistro": True})
    assert before[dk.O_SWINES:dk.O_FOLLOW].sum() == 0.0  # not shown yet
    swine = play(swine, "0:Qs", "1:Ad")  # trump led, the first swine shown
    after = CODEC.observe(GAME.view(swine, 3), 4, {"bistro": True})
    assert after[dk.O_SWINES + 2] == 1.0  # seat 1 is seat 3's relative seat 2
    duel = GAME.new_game(4, {"duel": True, "dealer": 3}, seed="duel")
    duel = play(duel, "0:healthy")
    assert len(_actions(duel, 1)) == 1 and _actions(duel, 1)[0] in (24, 25)


def test_tournament_display_still_shows_levels_but_no_parties() -> None:
    s = play(healthy(new(DEAL_A, tournament=True)), "0:re")
    obs = CODEC.observe(GAME.view(s, 1), 4, {"tournament": True})
    assert GAME.view(s, 1).re_level == 0  # the view leaves the level out...
    assert obs[dk.O_RE_LEVEL + 1] == 1.0  # ...the codec counts it from the announcements
    assert all(obs[dk.O_PARTIES + r * 3 + 2] == 1.0 for r in range(4))
    assert obs[dk.O_SCALARS + 5] == 1.0
