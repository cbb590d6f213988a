"""Sobe e Desce in the terminal: hand by suit, trumps, decisions, the trick to follow or beat,
tricks won and the scores going down to zero."""

from __future__ import annotations

import re

from croupier.v1 import croupier_pb2, sobe_e_desce_pb2

from clients.render import Renderer, plural, seat_label

RANKS = "23456QJK7A"
SUITS = "cdhs"
SUIT_NAMES = {"c": "clubs", "d": "diamonds", "h": "hearts", "s": "spades"}
SYMBOLS = {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}  # as the other French-card layouts write suits
LETTERS = {v: k for k, v in SYMBOLS.items()}
CARD = re.compile(r"\b([2-7QJKA])([cdhs])\b")
TRUMP = sobe_e_desce_pb2.SOBE_E_DESCE_PHASE_TRUMP
DECIDE = sobe_e_desce_pb2.SOBE_E_DESCE_PHASE_DECIDE
PLAY = sobe_e_desce_pb2.SOBE_E_DESCE_PHASE_PLAY
OVER = sobe_e_desce_pb2.SOBE_E_DESCE_PHASE_OVER
PHASES = {TRUMP: "choosing trumps", DECIDE: "play or pass", PLAY: "tricks", OVER: "over"}

View = sobe_e_desce_pb2.SobeEDesceView
Table = croupier_pb2.Table


def pretty(text: str) -> str:
    """Every card in `text` with its suit as a symbol: 'exchange 2c Qd' -> 'exchange 2♣ Q♦'."""
    return CARD.sub(lambda m: m.group(1) + SYMBOLS[m.group(2)], text)


def sorted_hand(hand: str, trump: str = "") -> list[list[str]]:
    """The cards by suit (trumps first), strongest first in each suit."""
    by_suit: dict[str, list[str]] = {}
    for card in hand.split():
        by_suit.setdefault(card[1:], []).append(card[0])
    order = sorted(by_suit, key=lambda s: (s != trump, SUITS.index(s) if s in SUITS else 9))
    return [
        [r + suit for r in sorted(by_suit[suit], key=lambda r: -RANKS.index(r) if r in RANKS else 0)]
        for suit in order
    ]


def hand_text(hand: str, trump: str = "") -> str:
    """Cards grouped by suit, strongest first, trumps first: 'A♠ 7♠ 2♠  K♣ 3♣'."""
    return "  ".join(pretty(" ".join(suit)) for suit in sorted_hand(hand, trump))


def trump_text(view: View) -> str:
    if not view.trump:
        return "not chosen yet"
    text = SUIT_NAMES.get(view.trump, view.trump)
    if view.turned_card:
        text += f" (turned {pretty(view.turned_card)})"
    if view.trump == "c":
        text += ", tricks count double"
    elif view.trump == "h":
        text += ", everybody plays"
    return text


def open_trick(view: View):
    if view.tricks and view.tricks[-1].winner < 0:
        return view.tricks[-1]
    return None


class SobeEDesceRenderer(Renderer[View]):
    def public(self, view: View, table: Table, me: int | None) -> list[str]:
        lines = []
        if view.phase == OVER:
            lines.append(f"match over after {plural(len(view.history), 'deal')}")
        else:
            lines.append(f"deal {view.deal_number + 1}, {PHASES.get(view.phase, '')}")
            lines.append(
                f"Dealer {seat_label(table, view.dealer, me)}; trumps chosen by "
                f"{seat_label(table, view.chooser, me)}: {trump_text(view)}"
            )
        lines.append(
            "Scores (first to 0 wins): "
            + "  ".join(f"{seat_label(table, s, me)} {v}" for s, v in enumerate(view.scores))
        )
        if view.decisions:
            parts = []
            for d in view.decisions:
                what = "plays" if d.plays else "passes"
                if d.exchanged:
                    what += f", exchanged {d.exchanged}"
                parts.append(f"{seat_label(table, d.seat, me)} {what}")
            lines.append("Decisions: " + "; ".join(parts))
        if view.phase == PLAY:
            won = "  ".join(
                f"{seat_label(table, d.seat, me)} {view.won[d.seat]}"
                for d in view.decisions if d.plays
            )
            done = sum(1 for t in view.tricks if t.winner >= 0)
            lines.append(f"Tricks won ({done} of 5 played): {won}")
        if view.phase == OVER and view.winner >= 0:
            lines.append(
                "RISCOS: " + "  ".join(
                    f"{seat_label(table, s, me)} {v:+d}" for s, v in enumerate(view.settlement)
                )
            )
        return lines

    def stage(self, view: View) -> tuple[object, ...]:
        return (view.deal_number, view.phase)

    def summary(self, view: View, table: Table) -> str:
        parts = [f"trump {view.trump or '?'}"]
        trick = open_trick(view)
        if trick is not None:
            parts.append("trick " + pretty(" ".join(trick.cards)))
        elif view.tricks:
            last = view.tricks[-1]
            parts.append(f"last trick {pretty(' '.join(last.cards))} to "
                         f"{seat_label(table, last.winner)}")
        parts.append("scores " + "/".join(str(v) for v in view.scores))
        return " · ".join(parts)

    def turn(self, view: View, table: Table, me: int) -> list[tuple[str, str | None]]:
        lines: list[tuple[str, str | None]] = []
        if view.phase == TRUMP:
            lines.append(("Choose trumps: name a suit, or turn your next card.", "bold yellow"))
        elif view.phase == DECIDE:
            forced = me < len(view.must_play) and view.must_play[me]
            lines.append((f"Trumps: {trump_text(view)}", "bold"))
            lines.append((
                "You must play; you may exchange up to 5 cards with the stock."
                if forced else
                "Play (keeping or exchanging cards) or pass. No trick when playing: +5 "
                f"(+10 under clubs). Stock: {plural(view.stock_size, 'card')}.",
                "bold yellow",
            ))
        elif view.phase == PLAY:
            lines.append((f"Trumps: {trump_text(view)}", "bold"))
            trick = open_trick(view)
            if trick is None:
                lines.append(("You lead: play any card.", "bold yellow"))
            else:
                led = SUIT_NAMES.get(trick.cards[0][1:], "?")
                played = ", ".join(pretty(c) for c in trick.cards)
                lines.append((f"Trick so far (led by {seat_label(table, trick.leader, me)}): "
                              f"{played}; follow {led}", "bold yellow"))
        count = plural(len(view.hand.split()), "card")
        lines.append((f"Your hand ({count}): {hand_text(view.hand, view.trump)}", "bold green"))
        return lines

    numbers_are_moves = False

    def label(self, view: View, move: str) -> str:
        return pretty(move)

    def typing(self) -> str:
        return ("Cards show with their suits as symbols (Q♦ 7♥); type them so or in the "
                "notation (Qd 7h): both are accepted.")

    def typed(self, text: str) -> str:
        return "".join(LETTERS.get(ch, ch) for ch in text)

    def order(self, view: View, moves: list[str]) -> list[str]:
        place = {c: i for i, c in enumerate(c for suit in sorted_hand(view.hand, view.trump)
                                            for c in suit)}
        cards = sorted((m for m in moves if m in place), key=place.__getitem__)
        return cards + [m for m in moves if m not in place]

    def deal_over(self, view: View, table: Table, me: int | None) -> list[str]:
        if not view.history:
            return []
        d = view.history[-1]
        lines = [f"  trumps {SUIT_NAMES.get(d.trump, d.trump)}"
                 + (f" (turned {pretty(d.turned_card)})" if d.turned_card else "")]
        for s in range(len(d.scores)):
            what = plural(d.tricks[s], "trick") if d.played[s] else "passed"
            before = d.scores[s] - d.change[s]
            lines.append(f"  {seat_label(table, s, me)}: {what}, {before} -> {d.scores[s]}")
        return lines


RENDERER = SobeEDesceRenderer()
