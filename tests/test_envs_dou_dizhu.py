"""The Dou Dizhu codec: one action per combination, an observation that is the view only.

Random play checks the codec against the engine's own legal moves (distinct, in range, named
as the engine writes them); random hands check the kicker-heavy families the random deals
rarely reach; concrete deals check a rocket, a four with two, an airplane with wings, a bid
and a pass against the documented action numbers.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engines.envs.dou_dizhu as codec_module
from engines.dou_dizhu import GAME, parse_move
from engines.dou_dizhu.cards import FULL_DECK, RANKS, counts, pack
from engines.dou_dizhu.moves import follow_moves, lead_moves
from engines.envs.dou_dizhu import CODEC, OBS_SIZE, OFFSETS, cards_vector, table
from engines.envs.registry import get_codec
from tests.engine_kit import RandomPlay

OPTION_SETS: list[dict[str, Any]] = [{}, {"deals": 3, "max_redeals": 1}]
N_ACTIONS = CODEC.num_actions(3, {})


# --- minimal shared checks (what engines/envs/codec_kit.py will hold) -----------------------

def check_moves(state: Any, seat: int, moves: Any) -> list[int]:
    """Every move gets a distinct in-range action named as the engine writes the move."""
    actions = [CODEC.action(state, seat, m) for m in moves]
    assert len(set(actions)) == len(actions), "two legal moves share an action"
    for move, a in zip(moves, actions, strict=True):
        assert 0 <= a < N_ACTIONS
        assert CODEC.action_name(a, 3, {}) == GAME.format_move(move)
    return actions


def check_observation(state: Any, seat: int | None, rng: random.Random, opts: dict) -> None:
    """Fixed shape, finite, and equal for another state consistent with the same view."""
    view = GAME.view(state, seat)
    obs = CODEC.observe(view, 3, opts)
    assert obs.dtype == np.float32 and obs.shape == CODEC.observation_shape(3, opts)
    assert np.isfinite(obs).all()
    check_play_features(view, obs)
    other = GAME.sample(view, rng)
    other_view = GAME.view(other, seat)
    np.testing.assert_array_equal(CODEC.observe(other_view, 3, opts), obs)


def check_play_features(view: Any, obs: np.ndarray) -> None:
    """The blocks the codec reads from a few entries of the play list, against a full count."""
    me = max(view.seat, 0)
    made = [0, 0, 0]
    last: dict[int, str] = {}
    for p in view.plays:
        last[p.seat] = p.move
        made[p.seat] += p.move != "pass"
    at, _ = OFFSETS["plays_made"]
    expected = [0.0] * 4
    for s in range(3):
        expected[(s - me) % 3] = float(made[s] > 0)
    if view.landlord >= 0:
        expected[3] = float(made[view.landlord] > 1)
    assert list(obs[at:at + 4]) == expected
    at, _ = OFFSETS["last_moves"]
    for s in range(3):
        block = obs[at + 55 * ((s - me) % 3):at + 55 * ((s - me) % 3 + 1)]
        if s not in last:
            assert not block.any()
        elif last[s] == "pass":
            assert block[54] == 1 and not block[:54].any()
        else:
            np.testing.assert_array_equal(block[:54], cards_vector(last[s]))
            assert block[54] == 0


def random_play(seed: str, rng: random.Random, opts: dict, observe: bool = True) -> int:
    walk = RandomPlay(GAME, GAME.new_game(3, opts, seed=seed), rng)
    for state, seat, _ in walk:
        check_moves(state, seat, GAME.legal_moves(state, seat))
        if observe:
            check_observation(state, seat, rng, opts)
            if walk.moves % 7 == 0:
                check_observation(state, None, rng, opts)
    obs = CODEC.observe(GAME.view(walk.state, 0), 3, opts)
    assert obs.shape == (OBS_SIZE,) and np.isfinite(obs).all()
    return walk.moves


# --- the table -------------------------------------------------------------------------

def test_registry_finds_the_codec() -> None:
    assert get_codec("dou_dizhu") is CODEC
    assert CODEC.game == GAME.info.name


def test_every_action_is_a_move_of_its_own_that_the_engine_parses_back() -> None:
    names = [CODEC.action_name(a, 3, {}) for a in range(N_ACTIONS)]
    assert len(set(names)) == N_ACTIONS == 28742
    for a, name in enumerate(names):
        move = parse_move(name)
        assert move.text == name
        assert CODEC.action(None, 0, move) == a
        assert move.n_cards <= 20


def test_the_docstring_action_table_is_the_table() -> None:
    doc = codec_module.__doc__ or ""
    rows = re.findall(r"^(\d+)\s+(\d+)\s+(\d+)\s{2,}\S", doc.split("Observation")[0], re.M)
    kinds = Counter(k[0] for k in table().keys)
    first = 0
    ranges = []
    for kind in sorted(kinds):
        ranges.append((first, first + kinds[kind] - 1, kinds[kind]))
        first += kinds[kind]
    assert [tuple(int(x) for x in r) for r in rows] == ranges
    assert f"`num_actions` is {N_ACTIONS}" in doc


def test_the_docstring_observation_layout_is_the_layout() -> None:
    doc = (codec_module.__doc__ or "").split("Observation")[1]
    rows = [(int(a), int(n)) for a, n in re.findall(r"^(\d+)\s+(\d+)\s{2,}\S", doc, re.M)]
    assert rows == sorted(OFFSETS.values())
    assert f"= ({OBS_SIZE},)" in doc


def test_the_worked_examples() -> None:
    for text, action in (("pass", 0), ("bid 2", 2), ("888+3", 115), ("BR", 28741),
                         ("3333+45", 26700), ("3333+4455", 27870), ("333444+55", 516),
                         ("333444+5566", 23761), ("3", 4), ("R", 18), ("2222", 28740)):
        assert CODEC.action(None, 0, parse_move(text)) == action, text
        assert CODEC.action_name(action, 3, {}) == text


def test_bad_input_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="no action"):
        CODEC.action_name(N_ACTIONS, 3, {})
    with pytest.raises(ValueError, match="no action"):
        CODEC.action_name(-1, 3, {})
    with pytest.raises(ValueError, match="not a Dou Dizhu move"):
        CODEC.action(None, 0, "888+3")


# --- random play and random hands ------------------------------------------------------

@pytest.mark.parametrize("opts", OPTION_SETS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.text(max_size=8), rng_seed=st.integers(0, 2**32))
def test_random_play(opts: dict, seed: str, rng_seed: int) -> None:
    assert random_play(seed, random.Random(rng_seed), opts) > 0


def test_random_play_over_many_deals_without_observing() -> None:
    """More deals, cheaply: legal moves only (a few thousand states)."""
    for k in range(300):
        random_play(f"many/{k}", random.Random(k), {}, observe=False)


_DECK = [r for r, c in enumerate(counts(FULL_DECK)) for _ in range(c)]


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_every_combination_of_a_random_hand_has_an_action(data: st.DataObject) -> None:
    """Hands of up to 20 cards lead and follow with many kickers: all distinct actions."""
    n = data.draw(st.integers(1, 20))
    hand = pack(data.draw(st.permutations(_DECK))[:n])
    leads = lead_moves(hand)
    actions = check_moves(None, 0, leads)
    assert len(actions) == len(leads)
    last = parse_move(data.draw(st.sampled_from(leads)).text)
    check_moves(None, 0, follow_moves(hand, last))


def test_a_hand_full_of_wings() -> None:
    """333444555666 with 7777 and more: hundreds of readings, all distinct."""
    hand = pack(RANKS.index(c) for c in "3334445556667777889B")
    moves = lead_moves(hand)
    assert len(moves) > 300
    check_moves(None, 0, moves)
    names = {m.text for m in moves}
    assert {"333444555666+7777", "333444555+666", "333444555666", "444555666777+3889"} <= names


# --- concrete deals ----------------------------------------------------------------------

def _deck(hands: list[str], kitty: str) -> str:
    """A `deck` option (dealer 2, so card k goes to seat k mod 3) dealing these hands."""
    codes = [RANKS[r] + s for r in range(13) for s in "shdc"] + ["B", "R"]
    pool = {RANKS[r]: [c for c in codes if c[0] == RANKS[r]] for r in range(15)}
    hands_cards = [[pool[c].pop(0) for c in h] for h in hands]
    kitty_cards = [pool[c].pop(0) for c in kitty]
    rest = [c for r in RANKS for c in pool[r]]
    for h in hands_cards:
        while len(h) < 17:
            h.append(rest.pop(0))
    assert not rest
    order = [hands_cards[k % 3][k // 3] for k in range(51)] + kitty_cards
    return " ".join(order)


SEAT0 = "33334445556666BR7"  # 17 cards; bids 3, takes the kitty 889
OPTS = {"deck": _deck([SEAT0, "", ""], "889"), "dealer": 2, "face_up": 0}


def _do(state: Any, text: str) -> tuple[Any, int]:
    """Play `text` as the environments do: its action, then the legal move with that action."""
    (seat,) = GAME.to_act(state)
    moves = GAME.legal_moves(state, seat)
    actions = check_moves(state, seat, moves)
    action = CODEC.action(state, seat, parse_move(text))
    assert CODEC.action_name(action, 3, {}) == text
    move = moves[actions.index(action)]
    return GAME.apply(state, seat, move), action


def test_a_deal_with_a_bid_a_plane_a_rocket_a_four_with_two_and_passes() -> None:
    s = GAME.new_game(3, OPTS, seed="scenario")
    assert s.face_up_holder == 0 and GAME.view(s, 0).hand == "333344455566667BR"
    s, a = _do(s, "bid 3")
    assert a == 3 and s.landlord == 0
    s, a = _do(s, "6666+79")  # four with two singles: 6666 is rank 3, (7, 9) ranks (4, 6)
    assert a == 26700 + 3 * 90 + [(x, y) for x, y in _pairs_without(3)].index((4, 6))
    obs = CODEC.observe(GAME.view(s, 1), 3, OPTS)
    at, _ = OFFSETS["to_beat_kind"]
    assert obs[at + 10] == 1  # four with two singles
    at, _ = OFFSETS["to_beat_seat"]
    assert list(obs[at:at + 3]) == [0, 0, 1]  # seat 0 is r=2 for seat 1
    s, a = _do(s, "pass")
    assert a == 0
    s, _ = _do(s, "pass")
    s, a = _do(s, "BR")
    assert a == 28741
    s, _ = _do(s, "pass")
    s, _ = _do(s, "pass")
    s, a = _do(s, "333444+5588")  # airplane 333444 (pair wings): 55 and 88 are the third pair
    assert a == 23761 + 2
    obs = CODEC.observe(GAME.view(s, 1), 3, OPTS)
    at, _ = OFFSETS["played"]
    landlord_played = obs[at + 2 * 54:at + 3 * 54]
    np.testing.assert_array_equal(landlord_played, cards_vector("333444556666788BR9"))
    at, _ = OFFSETS["landlord"]
    assert list(obs[at:at + 3]) == [0, 0, 1]
    at, _ = OFFSETS["bombs"]
    assert obs[at] == pytest.approx(1 / 14)  # the rocket; a four with two is no bomb
    at, _ = OFFSETS["hand_sizes"]
    assert obs[at + 2] == pytest.approx(2 / 20)
    at, _ = OFFSETS["plays_made"]
    assert list(obs[at:at + 4]) == [0, 0, 1, 1]  # the farmers have played nothing yet
    at, _ = OFFSETS["last_moves"]
    # seat 1 (r=0) and seat 2 (r=1) last passed; seat 0 (r=2) played the airplane
    assert obs[at:at + 54].sum() == 0 and obs[at + 54] == 1
    assert obs[at + 55:at + 109].sum() == 0 and obs[at + 109] == 1
    np.testing.assert_array_equal(obs[at + 110:at + 164], cards_vector("333444+5588"))
    assert obs[at + 164] == 0


def _pairs_without(f: int) -> list[tuple[int, int]]:
    """The kicker pairs of a four of rank f with two singles, in action order."""
    others = [r for r in range(15) if r != f]
    return [(a, b) for i, a in enumerate(others) for b in others[i + 1:] if (a, b) != (13, 14)]


def test_four_with_two_pairs_and_single_wings_are_offered() -> None:
    s = GAME.new_game(3, OPTS, seed="scenario")
    s, _ = _do(s, "bid 3")
    names = {m.text for m in GAME.legal_moves(s, 0)}
    for text in ("3333+4455", "6666+5588", "333444+55", "333444555+666", "444555666+333",
                 "333444555666+7889", "333444555666"):
        assert text in names
        s2, a = _do(s, text)
        assert CODEC.action_name(a, 3, {}) == text


def test_the_observation_holds_the_hand_and_the_bidding() -> None:
    s = GAME.new_game(3, OPTS, seed="scenario")
    s, _ = _do(s, "bid 1")
    s, _ = _do(s, "pass")
    view = GAME.view(s, 2)
    obs = CODEC.observe(view, 3, OPTS)
    at, n = OFFSETS["hand"]
    np.testing.assert_array_equal(obs[at:at + n], cards_vector(view.hand))
    at, _ = OFFSETS["bidding"]
    # seat 0 is r=1 for seat 2 and bid 1; seat 1 is r=2 and passed
    assert list(obs[at:at + 14]) == [0, 1, 0, 0, 1, 0, 0] + [0, 0, 1, 1, 0, 0, 0]
    at, _ = OFFSETS["to_act"]
    assert list(obs[at:at + 3]) == [1, 0, 0]
    at, _ = OFFSETS["face_up_rank"]
    assert obs[at] == 1  # the face-up card is seat 0's first card, a 3
    at, _ = OFFSETS["kitty_shown"]
    assert obs[at] == 0


def test_a_hand_made_view_is_counted_whatever_its_order() -> None:
    """A view whose play does not open with the landlord (not the engine's) is still read."""
    s = GAME.new_game(3, OPTS, seed="scenario")
    s, _ = _do(s, "bid 3")
    view = GAME.view(s, 1)
    del view.plays[:]
    for seat, move in ((1, "5"), (2, "pass"), (0, "7"), (1, "pass"), (2, "pass"), (0, "8")):
        view.plays.add(seat=seat, move=move)
    view.played[0], view.played[1] = "78", "5"
    obs = CODEC.observe(view, 3, OPTS)
    check_play_features(view, obs)
    at, _ = OFFSETS["plays_made"]
    assert list(obs[at:at + 4]) == [1, 0, 1, 1]
