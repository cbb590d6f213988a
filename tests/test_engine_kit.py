"""Every registered engine through the shared property kit (see tests/engine_kit.py)."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engines.registry import GAMES
from tests.engine_kit import BAD_OPTIONS, SETUPS, check_game, check_sample_diversity

CASES = [(name, i) for name in sorted(GAMES) for i in range(len(SETUPS.get(name, [None])))]


@pytest.mark.parametrize("name", sorted(GAMES))
def test_every_game_is_in_the_kit(name: str) -> None:
    assert SETUPS.get(name), f"{name} has no set-ups in tests/engine_kit.py"


@pytest.mark.parametrize(("name", "index"), CASES)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.text(min_size=1, max_size=12), rng_seed=st.integers(0, 2**32))
def test_random_play_keeps_every_invariant(name: str, index: int, seed: str, rng_seed: int) -> None:
    check_game(GAMES[name], SETUPS[name][index], seed, rng_seed)


@pytest.mark.parametrize(("name", "index"), CASES)
@settings(max_examples=150, deadline=None)
@given(seed=st.text(max_size=8), rng_seed=st.integers(0, 2**32))
def test_random_play_ends(name: str, index: int, seed: str, rng_seed: int) -> None:
    import random

    from tests.engine_kit import play_random

    game, setup = GAMES[name], SETUPS[name][index]
    final, _ = play_random(game, setup, seed, random.Random(rng_seed))
    res = game.result(final)
    assert res.finished
    if setup.zero_sum:
        assert sum(res.totals) == 0


@pytest.mark.parametrize(("name", "index"), CASES)
def test_views_hide_what_they_must(name: str, index: int) -> None:
    check_sample_diversity(GAMES[name], SETUPS[name][index], seed="diversity")


@pytest.mark.parametrize("name", sorted(GAMES))
@pytest.mark.parametrize("bad", BAD_OPTIONS)
def test_bad_options_are_refused(name: str, bad: dict) -> None:
    game = GAMES[name]
    with pytest.raises(ValueError, match="option"):
        game.new_game(game.info.min_players, bad, "s")


@pytest.mark.parametrize("name", sorted(GAMES))
@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=40))
def test_parse_move_never_crashes(name: str, text: str) -> None:
    game = GAMES[name]
    try:
        move = game.parse_move(text)
    except ValueError:
        return
    assert game.parse_move(game.format_move(move)) == move


@pytest.mark.parametrize("name", sorted(GAMES))
@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=200))
def test_decode_never_crashes(name: str, data: bytes) -> None:
    game = GAMES[name]
    with contextlib.suppress(ValueError):
        game.decode(data)
