"""How the matcher groups a queue's tickets (quick, rated, bot fill) and picks the bots' level:
the pure part of service.matchmaking, on tickets alone."""

from __future__ import annotations

import pytest

from common.level_names import LEVEL_NAMES
from service.matchmaking import (
    Group,
    MatchSettings,
    closest_level,
    form_groups,
    level_prior,
    parse_bots_after,
)
from service.tickets import Mode, Ticket
from tests.matchmaking_support import ticket

NOW = 1_000_000.0
SETTINGS = MatchSettings(window_base=5.0, window_growth=1.0)


def ids(groups: list[Group]) -> list[list[str]]:
    return [[t.player_id for t in g.tickets] for g in groups]


def test_quick_groups_the_oldest_first_and_leaves_the_rest_waiting() -> None:
    ts = [ticket(f"p{i}", NOW - 10 + i) for i in range(7)]
    groups = form_groups(list(reversed(ts)), 3, NOW, SETTINGS, bots_after=20)
    assert ids(groups) == [["p0", "p1", "p2"], ["p3", "p4", "p5"]]
    assert not any(g.bots for g in groups)


def test_quick_fills_with_bots_after_the_wait() -> None:
    ts = [ticket("old", NOW - 21), ticket("new", NOW - 1)]
    groups = form_groups(ts, 3, NOW, SETTINGS, bots_after=20)
    assert ids(groups) == [["old", "new"]] and groups[0].bots
    assert form_groups(ts, 3, NOW - 2, SETTINGS, bots_after=20) == []


def test_rated_groups_close_ratings_and_widens_with_the_wait() -> None:
    def rated(name: str, rating: float, waited: float) -> Ticket:
        return ticket(name, NOW - waited, mode=Mode.RATED, rating=rating)

    ts = [rated("a", 0, 1), rated("b", 30, 1), rated("c", 2, 1), rated("d", 31, 1),
          rated("e", 4, 1), rated("f", 33, 1)]
    groups = form_groups(ts, 3, NOW, SETTINGS, bots_after=20)
    assert sorted(sorted(g) for g in ids(groups)) == [["a", "c", "e"], ["b", "d", "f"]]
    # spread 12 > window 5 + 1 s: nobody yet; after 8 s of waiting the window is 13
    apart = [rated("x", 0, 1), rated("y", 6, 1), rated("z", 12, 1)]
    assert form_groups(apart, 3, NOW, SETTINGS, bots_after=60) == []
    later = [rated("x", 0, 8), rated("y", 6, 1), rated("z", 12, 1)]
    assert ids(form_groups(later, 3, NOW, SETTINGS, bots_after=60)) == [["x", "y", "z"]]


def test_rated_bot_fill_takes_the_closest_ratings() -> None:
    ts = [ticket("old", NOW - 25, mode=Mode.RATED, rating=10),
          ticket("far", NOW - 2, mode=Mode.RATED, rating=40),
          ticket("near", NOW - 1, mode=Mode.RATED, rating=12)]
    groups = form_groups(ts, 3, NOW, MatchSettings(window_base=3, window_growth=0), 20)
    assert ids(groups) == [["old", "near"]] and groups[0].bots


def test_bot_levels_closest_to_the_players() -> None:
    priors = {lv: level_prior(lv) for lv in LEVEL_NAMES}
    assert [priors[lv] for lv in LEVEL_NAMES] == sorted(priors.values())  # weakest first
    assert closest_level(0.0, priors) == "easy"  # a newcomer
    assert closest_level(100.0, priors) == "expert"
    assert closest_level(-100.0, priors) == "random"
    rated = dict(priors, hard=-3.0)  # a level's own rating overrides its prior
    assert closest_level(-3.5, rated) == "hard"


def test_bots_after_setting() -> None:
    assert parse_bots_after("20") == (20.0, {})
    assert parse_bots_after("15,dos=5, doppelkopf=30") == (15.0, {"dos": 5.0,
                                                                  "doppelkopf": 30.0})
    for wrong in ("soon", "dos=-1", "dos=nan"):
        with pytest.raises(ValueError, match="match-bots-after"):
            parse_bots_after(wrong)


def test_settings_from_the_command_line() -> None:
    from service.cli import build_parser
    from service.config import ServeConfig

    args = build_parser().parse_args(
        ["serve", "--match-bots-after", "12", "--match-bots-after", "dos=3",
         "--match-window-growth", "2"])
    config = ServeConfig(match_bots_after=",".join(args.match_bots_after),
                         match_window_growth=args.match_window_growth)
    settings = config.match_settings()
    assert (settings.bots_wait("dos"), settings.bots_wait("dobro")) == (3.0, 12.0)
    assert settings.window_growth == 2.0
    for wrong in (dict(match_bots_after="later"), dict(match_interval=0.0),
                  dict(match_ticket_seconds=-1.0)):
        with pytest.raises(ValueError):
            ServeConfig(**wrong).match_settings()
