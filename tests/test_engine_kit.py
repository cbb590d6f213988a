"""Every registered engine through the shared property kit (see tests/engine_kit.py)."""

from __future__ import annotations

import contextlib
from typing import AnyStr

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engines.registry import GAMES
from tests.engine_kit import (
    BAD_OPTIONS,
    REVEALED,
    SETUPS,
    check_game,
    check_sample_diversity,
    check_what_moves_show,
)

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
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.text(max_size=8), rng_seed=st.integers(0, 2**32))
def test_what_a_move_shows_is_the_same_in_every_world(
    name: str, index: int, seed: str, rng_seed: int
) -> None:
    """The twin-table probe at every move of random games: what another seat sees after a
    move (whose turn, the phase, the public cards, the counts) never depends on cards that
    seat cannot see; the engine's automatic steps (ended turns, forced moves, draws) are where
    such a dependence would hide."""
    check_what_moves_show(GAMES[name], SETUPS[name][index], seed, rng_seed)


@pytest.mark.parametrize("name", sorted(GAMES))
def test_every_game_says_what_its_rules_reveal(name: str) -> None:
    assert name in REVEALED, f"{name} has no REVEALED entry in tests/engine_kit.py"
    setup = SETUPS[name][0]
    view = GAMES[name].view(GAMES[name].new_game(setup.players, setup.options, "fields"), 0)
    assert set(REVEALED[name]) <= set(view.DESCRIPTOR.fields_by_name), \
        "REVEALED names a field the view has not"


@pytest.mark.parametrize(("name", "index"), CASES)
@settings(max_examples=20, deadline=None)
@given(seed=st.text(max_size=8), rng_seed=st.integers(0, 2**32))
def test_playing_only_the_seats_on_turn_ends(
    name: str, index: int, seed: str, rng_seed: int
) -> None:
    """A table whose optional actors never act (no announcement, no call) still ends when
    only the seats it waits for move: what a turn timer relies on."""
    import random

    from tests.engine_kit import play_random

    game, setup = GAMES[name], SETUPS[name][index]
    final, _ = play_random(game, setup, seed, random.Random(rng_seed), on_turn_only=True)
    assert game.result(final).finished


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


def _samples(name: str) -> tuple[list[bytes], list[str]]:
    """Encodings and move texts met along a few random games of `name` (cached)."""
    import random

    from tests.engine_kit import play_random

    if name not in _SAMPLES:
        game = GAMES[name]
        encodings: list[bytes] = []
        texts: list[str] = []

        def step(state, seat, move):
            if len(encodings) < 200:
                encodings.append(game.encode(state))
            texts.append(game.format_move(move))

        for i, setup in enumerate(SETUPS[name]):
            play_random(game, setup, f"fuzz{i}", random.Random(i), step)
        _SAMPLES[name] = (encodings, sorted(set(texts)))
    return _SAMPLES[name]


_SAMPLES: dict[str, tuple[list[bytes], list[str]]] = {}


@st.composite
def _mutated(draw: st.DrawFn, pool: list[AnyStr]) -> AnyStr:
    """A valid value with a few random edits: flips, cuts, insertions, splices."""
    value = draw(st.sampled_from(pool))
    chars = draw(st.binary(min_size=1, max_size=4)) if isinstance(value, bytes) else draw(
        st.text(min_size=1, max_size=4))
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(value)))
        edit = draw(st.sampled_from(["flip", "cut", "insert", "truncate", "dup"]))
        if edit == "flip" and i < len(value):
            value = value[:i] + chars[:1] + value[i + 1:]
        elif edit == "cut":
            value = value[:i] + value[i + draw(st.integers(1, 8)):]
        elif edit == "insert":
            value = value[:i] + chars + value[i:]
        elif edit == "truncate":
            value = value[:i]
        else:
            value = value + value[i:]
    return value


@pytest.mark.parametrize("name", sorted(GAMES))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_encodings_decode_or_raise_value_error(name: str, data: st.DataObject) -> None:
    """Corrupted states never crash decode with anything but ValueError; what does decode
    re-encodes to itself and answers the contract's questions without crashing."""
    game = GAMES[name]
    encodings, _ = _samples(name)
    blob = data.draw(_mutated(encodings))
    try:
        state = game.decode(blob)
    except ValueError:
        return
    assert game.decode(game.encode(state)) == state
    # the questions the service and the bots ask of every state it keeps: each answered, for
    # every seat (and a spectator), with no exception of any kind
    acting = game.to_act(state)
    players = game.num_players(state)
    assert acting <= set(range(players)), f"to_act {set(acting)} names no seat of {players}"
    for seat in sorted(acting):
        for move in game.legal_moves(state, seat):
            assert game.parse_move(game.format_move(move)) == move
    for observer in (None, *range(players)):
        game.view(state, observer)
    game.result(state)
    game.is_over(state)
    game.deal_number(state)


@pytest.mark.parametrize("name", sorted(GAMES))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_moves_parse_or_raise_value_error(name: str, data: st.DataObject) -> None:
    """Near-misses of real moves (the likeliest typos) parse to a move that round-trips, or
    raise ValueError, never anything else."""
    game = GAMES[name]
    _, texts = _samples(name)
    text = data.draw(st.one_of(_mutated(texts), st.sampled_from(texts).map(str.upper),
                               st.sampled_from(texts).map(lambda t: f"  {t}\t")))
    try:
        move = game.parse_move(text)
    except ValueError:
        return
    assert game.parse_move(game.format_move(move)) == move


@pytest.mark.parametrize(("name", "index"), CASES)
@settings(max_examples=10, deadline=None)
@given(seed=st.text(max_size=8), rng_seed=st.integers(0, 2**32))
def test_seats_outside_the_table_never_move(name: str, index: int, seed: str,
                                            rng_seed: int) -> None:
    """Every move of the seats at the table, tried by seat numbers the table has not, at
    every step of a random game (whose optional actions, e.g. calls, are taken at random)."""
    import random

    from tests.engine_kit import check_outsiders, play_random

    game, setup = GAMES[name], SETUPS[name][index]
    rng = random.Random(rng_seed + 1)
    play_random(game, setup, seed, random.Random(rng_seed),
                lambda state, seat, move: check_outsiders(game, state, setup.players, rng))
