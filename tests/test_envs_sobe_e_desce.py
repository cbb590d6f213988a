"""The Sobe e Desce codec: every legal move of random play gets an action of its own that its
name describes, observations have one shape and hide what the view hides, and concrete moves
land where the module docstring says."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.envs.registry import get_codec
from engines.envs.sobe_e_desce import (
    ABSENT,
    CHOOSER,
    DEALER,
    HAND,
    LED,
    NUM_ACTIONS,
    OBS_SIZE,
    PHASE,
    PLAYED,
    SCORE,
    TO_ACT,
    TRICK,
    TRUMP_SUIT,
    TURNED,
    WINNER,
)
from engines.sobe_e_desce import GAME, Move
from engines.sobe_e_desce.cards import CARD_TEXT, cards_of, parse_card
from engines.sobe_e_desce.game import OVER, PLAY
from engines.sobe_e_desce.moves import EXCHANGE
from tests.engine_kit import RandomPlay

CODEC = get_codec("sobe_e_desce")
PLAYERS = 4
OPTION_SETS: list[dict[str, Any]] = [
    {},
    {"start_score": 3, "dealer": 0},  # short matches: reaches the end and the settlement
    {"start_score": 8, "max_deals": 3},
]


def described(state, seat: int, move: Move, name: str) -> bool:
    """Whether `name` (an action's name) says what `move` does for `seat` in `state`."""
    if move.kind == EXCHANGE and move.arg:
        hand = cards_of(state.hands[seat])
        positions = [int(w[1:]) - 1 for w in name.split()[1:]]
        return name.startswith("exchange ") and sum(1 << hand[i] for i in positions) == move.arg
    return name == move.text


def check_state(state, options: Mapping[str, Any], rng: random.Random) -> None:
    """The codec's promises at one state: distinct in-range described actions for the legal
    moves; for every seat a fixed-shape finite observation that a resampled state keeps."""
    n = CODEC.num_actions(PLAYERS, options)
    for seat in GAME.to_act(state):
        moves = GAME.legal_moves(state, seat)
        actions = [CODEC.action(state, seat, m) for m in moves]
        assert all(0 <= a < n for a in actions), actions
        assert len(set(actions)) == len(actions), "two legal moves share an action"
        for m, a in zip(moves, actions, strict=True):
            assert described(state, seat, m, CODEC.action_name(a, PLAYERS, options)), (m, a)
    shape = CODEC.observation_shape(PLAYERS, options)
    for seat in [*range(PLAYERS), None]:
        view = GAME.view(state, seat)
        obs = CODEC.observe(view, PLAYERS, options)
        assert obs.shape == shape and obs.dtype == np.float32
        assert np.isfinite(obs).all()
        if seat is None:
            continue
        other = GAME.sample(view, rng)
        again = CODEC.observe(GAME.view(other, seat), PLAYERS, options)
        assert np.array_equal(obs, again), "the observation tells two consistent states apart"


def play_match(seed: int, options: Mapping[str, Any]) -> int:
    """A random match, checked at every state; the number of states."""
    rng = random.Random(seed)
    walk = RandomPlay(GAME, GAME.new_game(PLAYERS, options, seed=f"envs-{seed}"), rng)
    for state, _, _ in walk:
        check_state(state, options, rng)
    check_state(walk.state, options, rng)
    return walk.moves + 1


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), which=st.sampled_from(range(len(OPTION_SETS))))
def test_random_play_keeps_the_codec_promises(seed: int, which: int) -> None:
    assert play_match(seed, OPTION_SETS[which]) > 10


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_short_matches_end_with_the_winner_in_view(seed: int) -> None:
    options = {"start_score": 2, "dealer": seed % 4}
    rng = random.Random(seed)
    walk = RandomPlay(GAME, GAME.new_game(PLAYERS, options, seed=f"end-{seed}"), rng)
    for _ in walk:
        pass
    state = walk.state
    for seat in range(PLAYERS):
        obs = CODEC.observe(GAME.view(state, seat), PLAYERS, options)
        assert GAME.view(state, seat).phase == OVER and obs[PHASE + 3] == 1 and obs[TO_ACT:TO_ACT + 4].sum() == 0
        assert obs[WINNER + (state.winner - seat) % 4] == 1 and obs[WINNER:WINNER + 4].sum() == 1


def test_only_four_players() -> None:
    assert CODEC.num_actions(4, {}) == NUM_ACTIONS == 78
    assert CODEC.observation_shape(4, {}) == (OBS_SIZE,) == (668,)
    for players in (2, 3, 5):
        with pytest.raises(ValueError, match="exactly 4"):
            CODEC.num_actions(players, {})
    with pytest.raises(ValueError, match="out of range"):
        CODEC.action_name(NUM_ACTIONS, 4, {})
    with pytest.raises(ValueError, match="out of range"):
        CODEC.action_name(-1, 4, {})


def test_every_action_has_a_distinct_name() -> None:
    names = [CODEC.action_name(a, 4, {}) for a in range(NUM_ACTIONS)]
    assert len(set(names)) == NUM_ACTIONS
    assert names[:40] == list(CARD_TEXT)
    assert names[40:47] == ["trump c", "trump d", "trump h", "trump s", "turn", "pass", "play"]
    assert names[47] == "exchange #1" and names[77] == "exchange #1 #2 #3 #4 #5"


# --- scenarios -----------------------------------------------------------------------------

TOP = ["2c", "Qd", "5h", "Ac", "Kc", "Qc", "2d", "3d", "4d", "2h", "3h", "4h", "7h", "As", "Jc", "7c", "3c", "4c", "5d", "6d"]
"""Dealer 3: seat 0 gets 2c Qd 5h then 7h As, seat 1 Ac Kc Qc Jc 7c, seat 2 2d 3d 4d 3c 4c,
seat 3 2h 3h 4h 5d 6d; the stock follows in card order."""


def new_deal(**options: Any):
    deck = TOP + [c for c in CARD_TEXT if c not in TOP]
    return GAME.new_game(4, {"deck": " ".join(deck), "dealer": 3, **options}, seed="codec")


def act(state, *moves: str):
    for text in moves:
        state = GAME.apply(state, state.to_act, Move(text))
    return state


def test_trump_choice_and_decisions_map_to_their_actions() -> None:
    s = new_deal()
    assert [CODEC.action(s, 0, m) for m in GAME.legal_moves(s, 0)] == [40, 41, 42, 43, 44]
    s = act(s, "trump s")
    legal = GAME.legal_moves(s, 0)  # the chooser must play: no pass
    actions = {m.text: CODEC.action(s, 0, m) for m in legal}
    assert actions["play"] == 46 and "pass" not in actions
    assert len(actions) == 32 and sorted(actions.values()) == list(range(46, 78))
    # hand 2c Qd 5h 7h As: the 2nd and 5th cards
    assert actions["exchange Qd As"] == 46 + 0b10010 == 64
    assert CODEC.action_name(64, 4, {}) == "exchange #2 #5"
    assert actions["exchange 2c"] == 47 and actions["exchange 2c Qd 5h 7h As"] == 77
    s = act(s, "exchange Qd As")
    assert CODEC.action(s, 1, Move("pass")) == 45
    # the same positions of another hand are the same action: seat 1 holds Qc Jc Kc 7c Ac
    assert CODEC.action(s, 1, Move("exchange Jc Ac")) == 64
    with pytest.raises(ValueError, match="does not hold"):
        CODEC.action(s, 1, Move("exchange 2h"))


def test_cards_are_their_ids_in_play() -> None:
    s = act(new_deal(), "trump s", "play", "play", "play", "play")
    assert s.phase == PLAY
    # the chooser holds As and must lead it: one legal move, action 39
    assert [CODEC.action(s, 0, m) for m in GAME.legal_moves(s, 0)] == [39]
    s = act(s, "As")
    for m in GAME.legal_moves(s, 1):
        assert CODEC.action(s, 1, m) == parse_card(m.text)
        assert CODEC.action_name(CODEC.action(s, 1, m), 4, {}) == m.text


def test_observation_features_land_where_documented() -> None:
    s = act(new_deal(), "turn")  # seat 0 turns 7h: hearts
    obs = CODEC.observe(GAME.view(s, 2), 4, {})
    assert obs[TURNED + parse_card("7h")] == 1 and obs[TURNED:TURNED + 40].sum() == 1
    assert obs[TRUMP_SUIT + 2] == 1
    hand = [HAND + parse_card(c) for c in ["2d", "3d", "4d", "3c", "4c"]]
    assert obs[hand].sum() == 5 and obs[HAND:HAND + 40].sum() == 5
    # seat 2 sees the dealer (3) one seat on, the chooser and seat to act (0) two seats on
    assert obs[DEALER + 1] == 1 and obs[CHOOSER + 2] == 1 and obs[TO_ACT + 2] == 1
    assert obs[SCORE:SCORE + 4].tolist() == [1, 1, 1, 1]
    s = act(s, "play", "play", "play", "play", "2c", "Ac")  # seat 0 leads 2c, seat 1 Ac
    s = act(s, "3c")
    obs = CODEC.observe(GAME.view(s, 3), 4, {})  # seat 3: void in clubs, to act
    for rel, card in ((1, "2c"), (2, "Ac"), (3, "3c")):
        assert obs[TRICK + 40 * rel + parse_card(card)] == 1
        assert obs[PLAYED + 40 * rel + parse_card(card)] == 1
    assert obs[LED + 0] == 1 and obs[TO_ACT + 0] == 1
    s = act(s, "2h")  # seat 3 trumps; the trick goes to it, and it leads
    obs = CODEC.observe(GAME.view(s, 0), 4, {})
    assert obs[TRICK:TRICK + 160].sum() == 0 and obs[PLAYED + 40 * 3 + parse_card("2h")] == 1
    # seat 3 showed no clubs
    assert obs[ABSENT + 40 * 3 + parse_card("Jc")] == 1


def test_the_hidden_cards_do_not_change_the_observation() -> None:
    # two deals that differ only in the other seats' cards: seat 0's observations agree
    s = act(new_deal(), "trump c", "play")
    rng = random.Random(5)
    view = GAME.view(s, 0)
    obs = CODEC.observe(view, 4, {})
    others = {tuple(GAME.sample(view, rng).hands) for _ in range(5)}
    assert len(others) > 1
    for _ in range(5):
        assert np.array_equal(CODEC.observe(GAME.view(GAME.sample(view, rng), 0), 4, {}), obs)
