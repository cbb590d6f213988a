"""The Dos codec: distinct actions and leak-free observations over random play, and the
action layout its docstring documents."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.dos import GAME, parse_move
from engines.envs.codec_kit import check_codec
from engines.envs.dos import CODEC, NUM_ACTIONS, OBS_SIZE


@pytest.mark.parametrize(
    ("players", "options"),
    [(2, {"target": 1}), (3, {"target": 1}), (4, {"target": 1}),
     (3, {"target": 1, "official_no_match": True, "max_turns": 12})],
)
@settings(max_examples=3, deadline=None)
@given(seed=st.text(min_size=1, max_size=8))
def test_codec_over_random_play(players: int, options: dict, seed: str) -> None:
    assert check_codec(CODEC, players, options, [seed], every=3) > 0


def test_layout() -> None:
    names = [CODEC.action_name(a, 2, {}) for a in range(NUM_ACTIONS)]
    assert names[:5] == ["draw", "end", "end dos", "dos", "catch"]
    assert names[5] == "add b1" and names[45] == "add w2"
    assert len(set(names)) == NUM_ACTIONS == 6035
    # every name is the move's notation, and maps back to its action
    for a, name in enumerate(names):
        assert CODEC.action(None, 0, parse_move(name)) == a  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="0 to 6034"):
        CODEC.action_name(NUM_ACTIONS, 2, {})


def test_docstring_example() -> None:
    # dealer 1 of 2: seat 0 gets the even cards b7 g3 y4 b10 g10 r10 y10, the row is r7 y9
    top = "b7 b1 g3 b1 y4 b1 b10 b5 g10 b5 r10 b5 y10 b6 r7 y9"
    state = GAME.new_game(2, {"dealer": 1, "deck": _deck_with(top)}, "doc")
    assert state.current == 0
    moves = {m.text for m in GAME.legal_moves(state, 0)}
    assert moves == {"draw", "b7 on r7", "g3+y4 on r7"}
    actions = {CODEC.action(state, 0, parse_move(t)) for t in moves}
    assert len(actions) == 3 and 0 in actions
    assert {CODEC.action_name(a, 2, {}) for a in actions} == moves


def test_observation_sees_own_hand_only() -> None:
    state = GAME.new_game(3, {}, "obs")
    view = GAME.view(state, 1)
    obs = CODEC.observe(view, 3, {})
    assert obs.shape == (OBS_SIZE,) and obs.dtype == np.float32
    assert obs[:41].sum() > 0  # own hand
    assert obs[287:290].tolist() == pytest.approx([7 / 20] * 3)  # hand sizes, relative
    assert obs[291 + (state.current - 1) % 3] == 1.0  # who is on turn, relative
    other = GAME.sample(view, random.Random(5))
    assert np.array_equal(CODEC.observe(GAME.view(other, 1), 3, {}), obs)


def _deck_with(top: str) -> str:
    """A full 108-card order starting with `top` (the rest in type order)."""
    from collections import Counter

    from engines.dos.cards import CODES, full_deck

    head = top.split()
    left = Counter(CODES[t] for t in full_deck())
    left.subtract(Counter(head))
    assert min(left.values()) >= 0
    return " ".join(head + list(left.elements()))
