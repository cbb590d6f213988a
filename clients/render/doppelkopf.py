"""Doppelkopf in the terminal: hand sorted trumps first, the open trick, contract, parties,
announcements, card points and session scores."""

from __future__ import annotations

import re
from collections.abc import Sequence

from croupier.v1 import croupier_pb2, doppelkopf_pb2

from clients.render import Renderer, plural, seat_label, signed
from engines.doppelkopf.scoring import item_value

RESERVATIONS = doppelkopf_pb2.DOPPELKOPF_PHASE_RESERVATIONS
DECLARATION = doppelkopf_pb2.DOPPELKOPF_PHASE_DECLARATION
PLAYING = doppelkopf_pb2.DOPPELKOPF_PHASE_PLAYING
OVER = doppelkopf_pb2.DOPPELKOPF_PHASE_OVER
PHASES = {RESERVATIONS: "reservations", DECLARATION: "declaration", PLAYING: "playing",
          OVER: "over"}
CONTRACTS = (
    "normal game", "marriage", "diamond solo", "heart solo", "spade solo", "club solo",
    "queen solo", "jack solo", "aces solo (no trumps)", "pure club solo", "pure spade solo",
    "pure heart solo", "pure diamond solo",
)
LEVELS = ("", "re/kontra", "no 90", "no 60", "no 30", "schwarz")
SUITS = {"c": "♣", "s": "♠", "h": "♥", "d": "♦"}
LETTERS = {v: k for k, v in SUITS.items()}
CARD = re.compile(r"[9TJQKA][cshd]")
# the moves of the card play a seat may make but need not: announcements and declining them
OPTIONAL = re.compile(r"(?:re|kontra)(?: no (?:90|60|30)| schwarz)?|pass")

View = doppelkopf_pb2.DoppelkopfView
Table = croupier_pb2.Table


def pretty(cards: str) -> str:
    """'Qc Th' -> 'Q♣ 10♥': suits as symbols, tens as 10."""
    out = []
    for c in cards.split():
        rank = "10" if c[0] == "T" else c[0]
        out.append(rank + SUITS.get(c[1], c[1]))
    return " ".join(out)


def hand_order(hand: str, moves: list[str]) -> list[str]:
    """Card moves in the order of the hand (the engine sorts it trumps first, as a player
    holds it), then the other moves as listed."""
    place = {card: i for i, card in reversed(list(enumerate(hand.split())))}
    cards = sorted((m for m in moves if m in place), key=place.__getitem__)
    return cards + [m for m in moves if m not in place]


def contract_text(view: View, table: Table, me: int | None) -> str:
    name = CONTRACTS[view.contract] if 0 <= view.contract < len(CONTRACTS) else "?"
    if view.declarer >= 0:
        who = "bride" if view.contract == 1 else "soloist"
        name += f" ({who} {seat_label(table, view.declarer, me)})"
    return name


class DoppelkopfRenderer(Renderer[View]):
    def public(self, view: View, table: Table, me: int | None) -> list[str]:
        lines = []
        if view.phase == OVER:
            lines.append(f"session over after {plural(len(view.history), 'deal')}")
        else:
            deal = f"deal {view.deal_number + 1} of {view.deals}"
            if view.target_points:
                deal += f" (or first to {view.target_points})"
            modes = [m for m, on in (("Bistro", view.bistro), ("duel", view.duel),
                                     ("tournament display", view.tournament)) if on]
            extra = f" [{', '.join(modes)}]" if modes else ""
            lines.append(f"{deal}, {PHASES.get(view.phase, '')}{extra}; dealer "
                         f"{seat_label(table, view.dealer, me)}")
            if view.calls:
                lines.append("Calls: " + ", ".join(
                    f"{seat_label(table, a.seat, me)} {a.move}" for a in view.calls))
        if view.phase == PLAYING:
            lines.append("Game: " + contract_text(view, table, me))
            if view.partner >= 0:
                lines.append(f"Marriage partner: {seat_label(table, view.partner, me)}")
            if view.swines >= 0:
                lines.append(f"Swines: {seat_label(table, view.swines, me)}")
            anns = [a for a in view.announcements if a.move != "pass"]
            if anns:
                lines.append("Announced: " + ", ".join(
                    f"{seat_label(table, a.seat, me)} {a.move}" for a in anns))
            if view.parties and any(p >= 0 for p in view.parties):
                names = {1: "Re", 0: "Kontra", -1: "?"}
                lines.append("Parties: " + "  ".join(
                    f"{seat_label(table, s, me)} {names[p]}" for s, p in enumerate(view.parties)))
            if view.points:
                lines.append("Card points: " + "  ".join(
                    f"{seat_label(table, s, me)} {p}" for s, p in enumerate(view.points)))
            sizes = "  ".join(f"{seat_label(table, s, me)} {n}"
                              for s, n in enumerate(view.hand_sizes))
            lines.append(f"Cards left: {sizes}")
            if view.tricks:
                t = view.tricks[-1]
                lines.append(f"Last trick: {pretty(t.cards)} (led by "
                             f"{seat_label(table, t.leader, me)}, won by "
                             f"{seat_label(table, t.winner, me)})")
            if view.trick.cards:
                lines.append(f"On the table: {pretty(view.trick.cards)} (led by "
                             f"{seat_label(table, view.trick.leader, me)})")
        if any(view.totals):
            lines.append("Session totals: " + "  ".join(
                f"{seat_label(table, s, me)} {signed(t)}" for s, t in enumerate(view.totals)))
        return lines

    def stage(self, view: View) -> tuple[object, ...]:
        return (view.deal_number, view.phase, view.contract, len(view.tricks))

    def summary(self, view: View, table: Table) -> str:
        parts = [PHASES.get(view.phase, "")]
        if view.phase == PLAYING:
            parts.append(f"trick {len(view.tricks) + 1}")
            if view.trick.cards:
                parts.append("table " + pretty(view.trick.cards))
        return " · ".join(p for p in parts if p)

    def turn(self, view: View, table: Table, me: int) -> list[tuple[str, str | None]]:
        lines: list[tuple[str, str | None]] = []
        if view.phase == RESERVATIONS:
            lines.append(("Healthy (normal game) or reservation (solo or marriage)?", "bold yellow"))
        elif view.phase == DECLARATION:
            lines.append(("Name your reservation: a solo, or marriage.", "bold yellow"))
        elif view.phase == PLAYING:
            if view.trick.cards:  # the cards themselves are on the "On the table" line above
                lines.append((f"Follow {view.to_follow}." if view.to_follow
                              else "Play any card.", "bold yellow"))
            else:
                lines.append(("You lead: play any card.", "bold yellow"))
        count = plural(len(view.hand.split()), "card")
        lines.append((f"Your hand ({count}): {pretty(view.hand)}", "bold green"))
        return lines

    numbers_are_moves = False

    def news(self, view: View, move: str) -> bool:
        return move != "pass"  # no announcement until the trick ends: nothing changes

    def typing(self) -> str:
        return ("Cards show as on your hand (Q♣ 10♥ 9♦); type them so or in the notation "
                "(Qc Th 9d): both are accepted.")

    def label(self, view: View, move: str) -> str:
        return pretty(move) if CARD.fullmatch(move) else move

    def typed(self, text: str) -> str:
        return "".join(LETTERS.get(ch, ch) for ch in text)  # '10♠' is '10s', which is 'Ts'

    def order(self, view: View, moves: list[str]) -> list[str]:
        return hand_order(view.hand, moves)

    def optional(self, view: View, moves: list[str]) -> list[str]:
        if view.phase != PLAYING:
            return []
        return [m for m in moves if OPTIONAL.fullmatch(m)]

    def also(self, view: View, table: Table, me: int, moves: list[str]) -> str:
        # 're, re no 90, re no 60, re no 30, re schwarz' reads as 're … re schwarz'
        levels = [m for m in moves if m != "pass"]
        shown = [levels[0], "…", levels[-1]] if len(levels) > 2 else levels
        if "pass" in moves:
            shown.append("pass")
        text = ", ".join(shown).replace(", …,", " …")
        why = " ('pass': none until the trick ends)" if "pass" in moves else ""
        return f"Also: {text} — type {'it' if len(moves) == 1 else 'one'} any time{why}."

    def deal_over(self, view: View, table: Table, me: int | None) -> list[str]:
        if not view.history:
            return []
        d = view.history[-1]
        if d.no_score:
            return ["  the marriage found no partner: no score"]
        who = {1: "Re", 0: "Kontra", -1: "nobody"}[d.winner]
        res = [f"  {CONTRACTS[d.contract]}: Re {d.re_points} card points, {who} won, "
               f"value {abs(d.value)}" + (" (solo x3)" if d.solo else "")]
        res.append(counted_line(d.items, d.winner, d.value))
        return res


def counted_line(items: Sequence[str], winner: int, value: int) -> str:
    """'  counted for Kontra: won +1, re announced +2, fox caught kontra +1 x2': each item with
    what it adds for the party the deal's value goes to (against it: negative), the same
    items together; the points add up to the value."""
    party = "Re" if value >= 0 else "Kontra"
    side = 1 if value >= 0 else -1
    seen: dict[str, int] = {}
    for item in items:
        seen[item] = seen.get(item, 0) + 1
    parts = []
    for item, times in seen.items():
        points = side * item_value(item, winner)
        part = f"{item} {points:+d}" if points else item  # 'nobody won' counts nothing
        parts.append(part + (f" x{times}" if times > 1 else ""))
    return f"  counted for {party}: " + ", ".join(parts)


RENDERER = DoppelkopfRenderer()
