"""Worlds weighted by the others' moves: the deal's replay, the model, the pool, the level."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bots.heuristics import get_explains, get_heuristic
from bots.inference import Explains, Worlds, surprises
from bots.levels import Level
from engines.dou_dizhu import GAME as DD
from engines.dou_dizhu.game import BIDDING
from engines.registry import GAMES


def explains_of(name: str) -> Explains:
    """The game's model of the players (`bots.inference`); these games have one."""
    explains = get_explains(name)
    assert explains is not None, f"{name} has no model of the players"
    return explains


def heuristic_deal(seed: int, stop: int):
    """A Dou Dizhu deal the heuristic plays in every seat, cut after `stop` moves."""
    rng = random.Random(seed)
    choose = get_heuristic("dou_dizhu")
    state = DD.new_game(3, {}, seed=f"inference/{seed}")
    for _ in range(stop):
        if DD.deal_number(state) != 0 or DD.is_over(state):
            break
        seat = state.to_act
        state = DD.apply(state, seat, choose(DD, state, seat, DD.legal_moves(state, seat), rng))
    return state


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), stop=st.integers(0, 80))
def test_replay_rebuilds_the_deal(seed: int, stop: int) -> None:
    state = heuristic_deal(seed, stop)
    steps = list(DD.replay(state))
    if DD.is_over(state):
        assert steps == []
        return
    assert len(steps) == len(state.bidding) + len(state.plays)
    if not steps:
        return
    s = steps[0][0]
    assert s.phase == BIDDING and all(DD.legal_moves(s, seat) for seat in DD.to_act(s))
    for _, seat, move in steps:
        s = DD.apply(s, seat, move)
    for seat in range(3):  # the deal's moves from its deal lead back to the state
        assert DD.view(s, seat) == DD.view(state, seat)


def heuristic_play(name: str, options: dict, seed: int, stop: int):
    """A match of `name` the heuristic plays in every seat, cut after `stop` moves."""
    game = GAMES[name]
    rng = random.Random(seed)
    choose = get_heuristic(name)
    state = game.new_game(4, options, seed=f"inference/{seed}")
    for _ in range(stop):
        if game.is_over(state):
            break
        seat = sorted(game.to_act(state))[0]
        state = game.apply(state, seat, choose(game, state, seat, game.legal_moves(state, seat), rng))
    return state


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), stop=st.integers(0, 60), score=st.sampled_from([4, 6, 20]))
def test_sobe_e_desce_replay_rebuilds_the_deal_exchanges_included(
    seed: int, stop: int, score: int
) -> None:
    game = GAMES["sobe_e_desce"]
    state = heuristic_play("sobe_e_desce", {"start_score": score}, seed, stop)
    replayed = game.replay(state)
    assert replayed is not None  # Sobe e Desce rebuilds its deals
    steps = list(replayed)
    if not steps:
        assert game.is_over(state) or state.trump < 0 and not state.decisions
        return
    assert len(steps) == 1 + len(state.decisions) + sum(
        len(cards) for _, cards, _ in state.tricks) + len(state.trick)
    again = game.replay(state)  # one arrangement per state: a pure function
    assert again is not None and list(again) == steps
    s = steps[0][0]
    assert [h.bit_count() for h in s.hands] == [3, 3, 3, 3] and len(s.pending) == 8
    for _, seat, move in steps:
        s = game.apply(s, seat, move)
    for viewer in (None, 0, 1, 2, 3):
        assert game.view(s, viewer) == game.view(state, viewer)
    assert s.stock == state.stock and s.discards == state.discards and s.hands == state.hands


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), stop=st.integers(0, 80))
def test_the_heuristic_player_never_surprises_its_own_model(seed: int, stop: int) -> None:
    state = heuristic_deal(seed, stop)
    for seat in range(3):
        assert surprises(DD, state, seat, explains_of("dou_dizhu")) == 0


def test_a_model_that_explains_nothing_counts_every_choice_of_the_others() -> None:
    state = heuristic_deal(5, 40)
    steps = list(DD.replay(state))
    for seat in range(3):
        choices = sum(1 for st_, s, _ in steps if s != seat and len(DD.legal_moves(st_, s)) > 1)
        assert surprises(DD, state, seat, lambda *_: False) == choices > 0


def test_worlds_agree_with_the_view_and_favour_the_explained_ones() -> None:
    state = heuristic_deal(11, 30)
    seat = state.to_act
    view = DD.view(state, seat)
    pool = Worlds(DD, view, seat, random.Random(1), explains_of("dou_dizhu"), 200, 0.2)
    assert min(pool.surprises) < max(pool.surprises)  # the moves told the worlds apart
    for w, k, weight in zip(pool.worlds, pool.surprises, pool.weights, strict=True):
        assert DD.view(w, seat) == view
        assert weight == pytest.approx(0.2 ** (k - min(pool.surprises)))
    assert 1 <= pool.effective_size < 200
    rng = random.Random(2)
    drawn = [pool(rng) for _ in range(2000)]
    mean = sum(pool.surprises[pool.worlds.index(w)] for w in drawn) / len(drawn)
    assert mean < sum(pool.surprises) / len(pool.surprises)  # drawn by weight, not uniformly
    uniform = Worlds(DD, view, seat, random.Random(1), explains_of("dou_dizhu"), 50, 1.0)
    assert uniform.effective_size == pytest.approx(50)


def test_epsilon_must_be_a_probability() -> None:
    state = heuristic_deal(3, 10)
    for bad in (0.0, -0.5, 1.5):
        with pytest.raises(ValueError, match="epsilon"):
            Worlds(DD, DD.view(state, 0), 0, random.Random(1), explains_of("dou_dizhu"), 10, bad)


@pytest.mark.parametrize("name", sorted(GAMES))
def test_a_level_with_inference_plays_legal_reproducible_moves_in_every_game(name: str) -> None:
    """Games that cannot replay a deal, or have no model, search uniform worlds."""
    game = GAMES[name]
    level = Level("inferring", "ismcts", iterations=60, heuristic_playouts=True, pruned=True,
                  inference=0.3)
    from tests.ismcts_support import random_states

    for state, acting in random_states(name, 6, seed=4):
        seat = acting[0]
        view = game.view(state, seat)
        a, sa = level.choose(game, view, seat, random.Random(7))
        b, sb = level.choose(game, view, seat, random.Random(7))
        assert a in game.legal_moves(state, seat)
        assert a == b and (sa is None or sb is not None and sa.visits == sb.visits)


def test_sobe_e_desce_worlds_like_the_truth_surprise_the_model_less_than_uniform_ones() -> None:
    """The replay draws which cards an exchange took, so even the true deal may surprise the
    model now and then; it must still do so far less than worlds dealt blindly."""
    game = GAMES["sobe_e_desce"]
    explains = explains_of("sobe_e_desce")
    rng = random.Random(8)
    truth, blind = 0, 0.0
    for seed in range(40):
        state = heuristic_play("sobe_e_desce", {"start_score": 20}, seed, 12)
        if game.is_over(state) or state.trump < 0:
            continue
        seat = sorted(game.to_act(state))[0]
        truth += surprises(game, state, seat, explains) or 0
        blind += sum(surprises(game, game.sample(game.view(state, seat), rng), seat, explains)
                     or 0 for _ in range(5)) / 5
    assert truth < blind / 2, (truth, blind)
