"""The shared property kit: invariants every engine must keep, whatever the game.

Each engine registers the table set-ups to exercise in `SETUPS`, and in `REVEALED` the view
fields its rules fill from hidden places as moves are made (for `check_twins`, the twin-table
probe); `tests/test_engine_kit.py` runs every registered game through `check_game` and
`check_what_moves_show` over hypothesis-chosen seeds. A game in
`engines.registry.GAMES` without set-ups here fails the kit, so no engine skips it.
"""

from __future__ import annotations

import copy
import pickle
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from engines.contract import Game, IllegalMove, check_options


@dataclass(frozen=True)
class Setup:
    players: int
    options: dict[str, Any]
    zero_sum: bool = True
    max_moves: int = 20_000  # the bound within which random play must end


SETUPS: dict[str, list[Setup]] = {
    "dou_dizhu": [
        Setup(3, {}),
        Setup(3, {"deals": 3, "max_redeals": 1}),
    ],
    # Ranking points are not zero-sum. Every player count, with and without manual_draw; the
    # round counts kept small (rounds 0: as many rounds as players).
    "dobro": [
        Setup(2, {"deals": 0}, zero_sum=False),
        Setup(3, {"deals": 1}, zero_sum=False),
        Setup(4, {}, zero_sum=False),
        Setup(5, {"deals": 1}, zero_sum=False),
        Setup(6, {"deals": 1}, zero_sum=False),
        Setup(2, {"manual_draw": True, "deals": 0}, zero_sum=False),
        Setup(3, {"manual_draw": True, "deals": 1}, zero_sum=False),
        Setup(4, {"manual_draw": True, "deals": 2}, zero_sum=False),
        Setup(5, {"manual_draw": True, "deals": 1}, zero_sum=False),
        Setup(6, {"manual_draw": True, "deals": 1}, zero_sum=False),
    ],
    "doppelkopf": [
        Setup(4, {"deals": 2}),
        Setup(4, {"deals": 2, "bistro": True}),
        Setup(4, {"deals": 2, "duel": True}),
        Setup(4, {"deals": 1, "tournament": True}),
        Setup(4, {"deals": 4, "target": 1, "bistro": True, "tournament": True}),
    ],
    # Scores go down from start_score and are not zero-sum until the final RISCOS settlement
    # (checked in tests/test_sobe_e_desce_rules.py). Full matches at the default 20 points
    # last ~25 deals, so the kit bounds them with max_deals (the rule that ends long matches);
    # a low start score forces everybody to play (5 points or fewer) and ends naturally.
    "sobe_e_desce": [
        Setup(4, {"max_deals": 4}, zero_sum=False),
        Setup(4, {"start_score": 6, "dealer": 2}, zero_sum=False),
        Setup(4, {"start_score": 12, "max_deals": 6}, zero_sum=False),
    ],
    # Dos scores are not zero-sum (only the round winner scores); low targets keep the
    # matches short, the max_turns set-up plays blocked rounds.
    "dos": [
        Setup(2, {"target": 30}, zero_sum=False),
        Setup(3, {"target": 30}, zero_sum=False),
        Setup(4, {"target": 60}, zero_sum=False),
        Setup(2, {"official_no_match": True, "target": 60}, zero_sum=False),
        Setup(4, {"official_no_match": True, "target": 30}, zero_sum=False),
        Setup(3, {"max_turns": 10, "target": 30}, zero_sum=False),
    ],
}

BAD_OPTIONS: list[dict[str, Any]] = [
    {"no_such_option": 1},
]


class RandomPlay:
    """Uniformly random legal moves from `state` to the end of the match: iterating yields
    (state, seat, move) before each move is applied, so that a test checks every state on
    the way (its own use of `rng` there is fine); `state` is then the final state and `moves`
    their number. Every test that plays at random walks through here, which checks on the
    way that a game not over has a seat to act with a legal move, and ends within
    `max_moves`. `on_turn_only`: only the seats the game waits for move (as a turn timer
    would play)."""

    def __init__(self, game: Game, state: Any, rng: random.Random, on_turn_only: bool = False,
                 max_moves: int | None = None) -> None:
        self.game, self.state, self.rng = game, state, rng
        self.on_turn_only, self.max_moves = on_turn_only, max_moves
        self.moves = 0

    def __iter__(self) -> Iterator[tuple[Any, int, Any]]:
        game, rng = self.game, self.rng
        while not game.is_over(self.state):
            state = self.state
            seats = sorted(game.on_turn(state) if self.on_turn_only else game.to_act(state))
            assert seats, "to_act is empty but the game is not over"
            seat = rng.choice(seats)
            legal = game.legal_moves(state, seat)
            assert legal, f"seat {seat} must act but has no legal move"
            move = rng.choice(list(legal))
            yield state, seat, move
            self.state = game.apply(state, seat, move)
            self.moves += 1
            assert self.max_moves is None or self.moves <= self.max_moves, (
                f"random play did not end within {self.max_moves} moves")


def play_random(
    game: Game, setup: Setup, seed: str, rng: random.Random, step=None, on_turn_only=False
):
    """Play a match of `setup` at random to the end (RandomPlay); call step(state, seat,
    move) each move. Answers the final state and the number of moves."""
    walk = RandomPlay(game, game.new_game(setup.players, setup.options, seed), rng,
                      on_turn_only, setup.max_moves)
    for state, seat, move in walk:
        if step is not None:
            step(state, seat, move)
    return walk.state, walk.moves


def check_game(game: Game, setup: Setup, seed: str, rng_seed: int, samples: int = 1) -> None:
    """Every invariant of the contract along one random game."""
    rng = random.Random(rng_seed)
    sample_rng = random.Random(rng_seed + 1)
    outsider_rng = random.Random(rng_seed + 2)
    history: list[tuple[int, Any]] = []
    encodings: list[bytes] = []
    first = game.new_game(setup.players, setup.options, seed)
    census0 = game.census(first)
    seats = list(range(setup.players))

    def step(state, seat, move):
        data = game.encode(state)
        encodings.append(data)
        history.append((seat, move))
        # encode / decode round trip
        back = game.decode(data)
        assert back == state and game.encode(back) == data
        # conservation of cards
        if census0 is not None:
            assert game.census(state) == census0, "cards were created or lost"
        # only seats in to_act have moves; notation round-trips exactly
        acting = game.to_act(state)
        # the seats waited for: some of those that may act, each with a move
        on_turn = game.on_turn(state)
        assert on_turn and on_turn <= acting, f"on_turn {set(on_turn)} not in {set(acting)}"
        assert all(game.legal_moves(state, s) for s in on_turn)
        for s in seats:
            legal = game.legal_moves(state, s)
            if s not in acting:
                assert not legal, f"seat {s} has moves but is not to act"
                continue
            for m in legal:
                text = game.format_move(m)
                again = game.parse_move(text)
                assert again == m and game.format_move(again) == text, text
                # the repr is the parse call; copies and pickles are the same move
                assert repr(m) == f"Move({text!r})", repr(m)
                assert copy.deepcopy(m) == m and pickle.loads(pickle.dumps(m)) == m, text
        # a seat not to act is refused and nothing changes
        for s in seats:
            if s not in acting:
                try:
                    game.apply(state, s, move)
                except IllegalMove:
                    pass
                else:
                    raise AssertionError(f"seat {s} moved out of turn")
        check_outsiders(game, state, setup.players, outsider_rng)
        assert game.encode(state) == data, "a refused move changed the state"
        # views: exactly reproducible from a sample, and the hidden part really varies
        for observer in [None, *seats]:
            view = game.view(state, observer)
            for _ in range(samples):
                guess = game.sample(view, sample_rng)
                assert game.view(guess, observer) == view, f"view(sample(v)) != v for {observer}"
                if game.census(guess) is not None and census0 is not None:
                    assert game.census(guess) == census0, "a sample created or lost cards"
        # replay (where the game has one): the deal's moves from its deal lead back here, for
        # the state and for a world sampled from a seat's view (what bots replay)
        for world in (state, game.sample(game.view(state, seats[-1]), sample_rng)):
            steps = game.replay(world)
            if steps is None:
                break
            steps = list(steps)
            if steps:
                again = steps[0][0]
                for s, m in ((s, m) for _, s, m in steps):
                    again = game.apply(again, s, m)
                assert all(game.view(again, o) == game.view(world, o) for o in [None, *seats]), \
                    "replaying the deal does not lead back to the state"
        # result: zero-sum per deal and for the match
        res = game.result(state)
        if setup.zero_sum:
            assert sum(res.totals) == 0 and sum(res.last_deal) == 0

    final, _ = play_random(game, setup, seed, rng, step)
    res = game.result(final)
    assert res.finished and not game.to_act(final) and not game.on_turn(final)
    assert res.winners and all(0 <= w < setup.players for w in res.winners)
    if setup.zero_sum or game.info.zero_sum:  # GameInfo's zero_sum: the match totals
        assert sum(res.totals) == 0
    if game.info.bounds is not None:  # the returns stay within the game's stated bounds
        b = game.info.bounds(setup.players, check_options(game.info.options, setup.options))
        assert all(b.lowest <= t <= b.highest for t in res.totals), (res.totals, b)
    # determinism: the same seed and moves give the same states
    state = game.new_game(setup.players, setup.options, seed)
    for (seat, move), data in zip(history, encodings, strict=True):
        assert game.encode(state) == data, "same seed and moves gave a different state"
        state = game.apply(state, seat, move)
    assert game.encode(state) == game.encode(final)


def outside_seats(players: int) -> tuple[int, ...]:
    """Seat numbers no table of `players` has: past either end, a negative one that would
    index the last (or first) seat's data, and one far off."""
    return (-1, -players, players, players + 1, 2**31 - 1)


def check_outsiders(game: Game, state: Any, players: int, rng: random.Random,
                    most: int = 40) -> None:
    """A seat outside 0..players-1 has no legal move, and every move it tries (up to `most` of
    the real seats' legal moves) is refused with IllegalMove."""
    tried: list[Any] = []
    for seat in sorted(game.to_act(state)):
        tried += [m for m in game.legal_moves(state, seat) if m not in tried]
    if len(tried) > most:
        tried = rng.sample(tried, most)
    for outsider in outside_seats(players):
        legal = game.legal_moves(state, outsider)
        assert not legal, f"seat {outsider} of a {players}-player table has moves {legal[:3]}"
        for move in tried:
            try:
                game.apply(state, outsider, move)
            except IllegalMove:
                continue
            raise AssertionError(
                f"seat {outsider} of a {players}-player table played {game.format_move(move)}")


def check_sample_diversity(game: Game, setup: Setup, seed: str, tries: int = 30) -> None:
    """Samples from a seat's view deal the other seats' cards differently: the view hides them."""
    state = game.new_game(setup.players, setup.options, seed)
    rng = random.Random(seed)
    for observer in range(setup.players):
        view = game.view(state, observer)
        others = {
            tuple(
                game.view(game.sample(view, rng), s).SerializeToString(deterministic=True)
                for s in range(setup.players)
                if s != observer
            )
            for _ in range(tries)
        }
        assert len(others) > 1, f"seat {observer}'s view determines the hidden cards"


# --- what a move shows: the twin check -------------------------------------------------------

def _cards(text: str) -> int:
    """How many cards a card string holds (space-separated codes)."""
    return len(text.split())


def _chars(text: str) -> int:
    """How many cards a Dou Dizhu card string holds (one character each, no spaces)."""
    return len(text.replace(" ", ""))


# Per game, the view fields that show what the rules reveal as a move is made, whatever the
# hidden cards: cards newly come out of hidden places (a row refilled from the pile, the kitty
# shown as the landlord takes it, a card turned for trumps) or a fact a player must show (the
# Bistro swines, shown with the first diamond ace). They differ between worlds by the luck of
# the cards, so each is compared through the function given (how many cards; whether shown).
# The observer's own hand is always left out: its new cards are its own, and its size is in
# every view's `hand_sizes`.
REVEALED: dict[str, dict[str, Callable[[Any], Any]]] = {
    "dou_dizhu": {"kitty": _chars},
    "dobro": {},
    # seeds/doppelkopf.md, Bistro: the swines become public when the first of them is played
    "doppelkopf": {"swines": lambda seat: seat != -2},
    # turning a card for trumps shows a card of the deal; the trump suit is that card's, and
    # with hearts everybody must play (seeds/sobe_e_desce.md)
    "sobe_e_desce": {"turned_card": _cards, "trump": _cards, "must_play": len},
    "dos": {"row": _cards},
}


def shuffle(game: Game, state: Any) -> tuple[int, int]:
    """Which shuffle the cards in play come from: the deal, and the redeals within it (Dou
    Dizhu deals again, from a fresh shuffle, when every seat passes)."""
    return game.deal_number(state), getattr(state, "shuffles", 0)


def public_outcome(game: Game, state: Any, observer: int | None, deal: tuple[int, int]) -> Any:
    """What `observer` sees of `state` after a move, less what the rules reveal (`REVEALED`):
    its view and who acts next. Once the deal is over, only that it is: its scoring shows
    the hidden cards (and so whether the match is over), and a new deal is a new shuffle."""
    from google.protobuf.json_format import MessageToDict

    if game.is_over(state) or shuffle(game, state) != deal:
        # the deal's scores show its hidden cards (and so whether the match is over)
        return {"the deal is over": True}
    view = game.view(state, observer)
    shown = MessageToDict(view, preserving_proto_field_name=True)
    shown.pop("hand", None)
    for name, compared in REVEALED[game.info.name].items():
        shown[name] = compared(getattr(view, name))
    shown["to act"] = sorted(game.to_act(state))
    shown["on turn"] = sorted(game.on_turn(state))
    return shown


def revealed(game: Game, state: Any, observer: int | None, deal: tuple[int, int]) -> list[str]:
    """The values of the fields the rules fill from hidden places (`REVEALED`), as `observer`
    sees them in `state` ([] once the deal is over)."""
    if game.is_over(state) or shuffle(game, state) != deal:
        return []
    view = game.view(state, observer)
    return [str(getattr(view, name)) for name in REVEALED[game.info.name]]


def _differences(a: dict, b: dict) -> list[str]:
    return sorted(
        f"{k}: {a.get(k)!r} / {b.get(k)!r}" for k in a.keys() | b.keys() if a.get(k) != b.get(k)
    )


def check_twins(game: Game, state: Any, mover: int, move: Any, rng: random.Random,
                worlds: int = 3) -> None:
    """The probe's twin tables made general: after `mover` plays `move`, what every other seat
    (and a spectator) sees next is the same in every world that seat's view allows, the true
    one included, in which the move is legal. A difference means the engine's answer to the
    move (an automatic step: an ended turn, a forced move, a draw) depends on cards that seat
    cannot see, and so tells it something about them."""
    deal = shuffle(game, state)
    observers = [None, *(s for s in range(game.num_players(state)) if s != mover)]
    text = game.format_move(move)
    for observer in observers:
        view = game.view(state, observer)
        seen: dict | None = None
        truth: list[str] = []
        for k in range(worlds + 1):
            world = state if k == 0 else game.sample(view, rng)
            if k and move not in game.legal_moves(world, mover):
                continue
            after = game.apply(world, mover, move)
            # what the rules reveal with this move (Bistro's swines, a card turned) may decide
            # what follows (who wins the trick): worlds revealing something else are not twins
            told = revealed(game, after, observer, deal)
            if k == 0:
                truth = told
            elif told != truth:
                continue
            shown = public_outcome(game, after, observer, deal)
            if seen is None:
                seen = shown
            elif shown != seen:
                raise AssertionError(
                    f"after seat {mover}'s {text}, seat {observer} sees different things in two "
                    f"worlds its view allows: {'; '.join(_differences(seen, shown))}"
                )


def check_what_moves_show(game: Game, setup: Setup, seed: str, rng_seed: int,
                          worlds: int = 3) -> None:
    """`check_twins` at every move of one random game."""
    rng = random.Random(rng_seed + 3)
    play_random(game, setup, seed, random.Random(rng_seed),
                lambda state, seat, move: check_twins(game, state, seat, move, rng, worlds))
