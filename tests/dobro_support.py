"""Helpers for the Dobro tests: fixed decks written hand by hand, moves by notation."""

from __future__ import annotations

from typing import Any

from engines.dobro import GAME, DobroState
from engines.dobro.cards import CODES, count, full_deck, pack, parse_list


def deck(players: int, hands: list[str], pile: str = "", aside: str = "") -> str:
    """A full `deck` option: the given hands (seat 0 first), the set-aside cards (two players),
    then the draw pile starting with `pile`; the cards not named fill the rest in card order."""
    limit = 5 if players == 6 else 6
    named = [parse_list(h) for h in hands]
    assert all(len(h) == limit for h in named), f"hands hold {limit} cards"
    assert len(named) == players
    top = parse_list(pile)
    put_aside = parse_list(aside)
    used = pack([k for h in named for k in h] + top + put_aside)
    rest_packed = full_deck(players) - used
    assert all(count(rest_packed, k) >= 0 for k in range(14)), "more cards than the deck has"
    rest: list[int] = []
    for k in range(14):
        rest += [k] * count(rest_packed, k)
    order = [k for h in named for k in h]
    if players == 2:
        fill = 10 - len(put_aside)
        order += put_aside + rest[:fill]
        rest = rest[fill:]
    order += top + rest
    return " ".join(CODES[k] for k in order)


def new(players: int, hands: list[str], pile: str = "", opener: int = 0, **options: Any) -> DobroState:
    return GAME.new_game(players, {"deck": deck(players, hands, pile), "opener": opener, **options}, "t")


def play(state: DobroState, *moves: str) -> DobroState:
    """Plays moves in order, each by the seat whose turn it is."""
    for text in moves:
        state = GAME.apply(state, state.turn, GAME.parse_move(text))
    return state


def by(state: DobroState, seat: int, text: str) -> DobroState:
    return GAME.apply(state, seat, GAME.parse_move(text))


def legal(state: DobroState, seat: int | None = None) -> list[str]:
    return [m.text for m in GAME.legal_moves(state, state.turn if seat is None else seat)]


def with_hand(state: DobroState, seat: int, text: str) -> DobroState:
    """A copy where `seat` holds exactly `text`: missing cards come from the draw pile (or, when
    it lacks them, from the score piles), the cards it gives up go to its own score pile. Every
    card stays in the game, so the census is unchanged."""
    from engines.dobro.cards import N_KINDS, counts, parse_cards

    s = state.copy()
    want, have = counts(parse_cards(text)), counts(s.hands[seat])
    pile = list(s.pile[s.pos:])
    collected = list(s.collected)
    for k in range(N_KINDS):
        for _ in range(want[k] - have[k]):
            if k in pile:
                pile.remove(k)
                continue
            donor = next(i for i, c in enumerate(collected) if count(c, k))
            collected[donor] -= 1 << (4 * k)
        if have[k] > want[k]:
            collected[seat] += (have[k] - want[k]) << (4 * k)
    s.hands = tuple(parse_cards(text) if i == seat else h for i, h in enumerate(s.hands))
    s.pile, s.pos = tuple(pile), 0
    s.collected = tuple(collected)
    return s
