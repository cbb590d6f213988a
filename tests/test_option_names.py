"""One name for one meaning across the games' options, older names kept as aliases.

A match of N deals is `deals` and a target score `target` in every game that has one; the
names they had before (`rounds`, `target_points`) are still accepted by `new_game`, and make
the same game, but one option under both names is refused clearly.
"""

from __future__ import annotations

import pytest

from engines.contract import OptionSpec
from engines.registry import GAMES

ALIASED = [
    (name, spec) for name, game in GAMES.items() for spec in game.info.options if spec.aliases
]

# the old spellings, each now an alias of the one name its meaning has everywhere
RENAMED = {"rounds": "deals", "target_points": "target"}


def _value(spec: OptionSpec) -> object:
    """A valid value of the option other than its default, so that the alias has effect."""
    if spec.type == "bool":
        return not spec.default
    return 1 if spec.default != 1 else 2


def test_old_names_are_aliases_of_the_one_name() -> None:
    every = {spec.name for game in GAMES.values() for spec in game.info.options}
    aliases = {alias: spec.name for _, spec in ALIASED for alias in spec.aliases}
    assert not set(RENAMED) & every, "an old name is still some game's option name"
    assert {alias: aliases.get(alias) for alias in RENAMED} == RENAMED
    assert not set(aliases) & every, "an alias is also an option's name"


@pytest.mark.parametrize(("game", "spec"), ALIASED, ids=[f"{g}-{s.name}" for g, s in ALIASED])
def test_both_spellings_make_the_same_game(game: str, spec: OptionSpec) -> None:
    engine = GAMES[game]
    n = engine.info.min_players
    value = _value(spec)
    new = engine.new_game(n, {spec.name: value}, "aliases")
    default = engine.new_game(n, {}, "aliases")
    assert engine.encode(new) != engine.encode(default), "the value has no effect"
    for alias in spec.aliases:
        old = engine.new_game(n, {alias: value}, "aliases")
        assert engine.encode(old) == engine.encode(new)


@pytest.mark.parametrize(("game", "spec"), ALIASED, ids=[f"{g}-{s.name}" for g, s in ALIASED])
def test_both_spellings_at_once_are_refused(game: str, spec: OptionSpec) -> None:
    engine = GAMES[game]
    value = _value(spec)
    for alias in spec.aliases:
        with pytest.raises(ValueError, match=f"{spec.name!r} given twice, also as {alias!r}"):
            engine.new_game(engine.info.min_players, {spec.name: value, alias: value}, "x")
