"""Dobro in the terminal: the value in play and the auction, the hand in card order, cards
collected, the draw pile, the direction of play, the Oubli card and the penalty points.

Scores in the API's Result are penalty points negated (higher is better everywhere); these
lines show the penalty points themselves, lowest best.
"""

from __future__ import annotations

from croupier.v1 import croupier_pb2, dobro_pb2

from clients.render import Renderer, plural, seat_label

PLAY = dobro_pb2.DOBRO_STAGE_PLAY
DRAW = dobro_pb2.DOBRO_STAGE_DRAW
END_TURN = dobro_pb2.DOBRO_STAGE_END_TURN
OVER = dobro_pb2.DOBRO_STAGE_OVER

View = dobro_pb2.DobroView
Table = croupier_pb2.Table


def _count(cards: str) -> int:
    return len(cards.split())


def auction_text(view: View, table: Table, me: int | None) -> str:
    """'seat 3 (bot) 8 → 8, seat 0 (you) 9 → 9, seat 1 (bot) 9 → 18 Dobro!'"""
    parts = []
    for a in view.auction:
        extra = " Dobro!" if a.dobro else ""
        parts.append(f"{seat_label(table, a.seat, me)} {a.move} → {a.value}{extra}")
    return ", ".join(parts)


class DobroRenderer(Renderer[View]):
    def public(self, view: View, table: Table, me: int | None) -> list[str]:
        lines = []
        if view.stage == OVER:
            lines.append(f"match over after {plural(len(view.history), 'round')}")
        else:
            way = "seat order" if view.direction > 0 else "reverse seat order"
            lines.append(
                f"round {view.round + 1} of {view.rounds}, play goes in {way}; "
                f"draw pile {view.draw_pile}" + (f", {view.set_aside} set aside" if view.set_aside else "")
            )
        sizes = "  ".join(f"{seat_label(table, s, me)} {n}" for s, n in enumerate(view.hand_sizes))
        lines.append(f"Cards in hand: {sizes}")
        piles = "  ".join(
            f"{seat_label(table, s, me)} {_count(c)}" for s, c in enumerate(view.collected)
        )
        lines.append(f"Cards collected this round: {piles}")
        if view.oubli >= 0:
            lines.append(f"Oubli card (+1 point): {seat_label(table, view.oubli, me)}")
        if view.forgetters:
            who = ", ".join(seat_label(table, f, me) for f in view.forgetters)
            lines.append(f"Forgot to draw (may be called): {who}")
        if view.stage != OVER:
            if view.auction:
                lines.append(f"Auction at {view.value}: {auction_text(view, table, me)}")
            else:
                lines.append(f"{seat_label(table, view.turn, me)} opens a new auction")
        if view.history:
            lines.append(
                "Penalty points (lowest wins): "
                + "  ".join(f"{seat_label(table, s, me)} {t}" for s, t in enumerate(view.totals))
            )
        return lines

    def stage(self, view: View) -> tuple[object, ...]:
        return (view.round, view.stage == OVER)

    def summary(self, view: View, table: Table) -> str:
        parts = [view.announcement] if view.announcement else []
        parts.append("hands " + "/".join(str(n) for n in view.hand_sizes))
        if view.auction:
            parts.append(f"value {view.value}, {plural(_count(view.auction_cards), 'card')} in play")
        elif view.stage != OVER:
            parts.append(f"{seat_label(table, view.turn)} opens")
        parts.append(f"pile {view.draw_pile}")
        return " · ".join(parts)

    def turn(self, view: View, table: Table, me: int) -> list[tuple[str, str | None]]:
        lines: list[tuple[str, str | None]] = []
        if view.stage == PLAY:
            if view.auction:
                lines.append((
                    f"Value in play: {view.value} ({plural(_count(view.auction_cards), 'card')} "
                    f"to take if you pass). Play {view.value} or more (equal doubles it), a "
                    "special card, or pass.", "bold yellow",
                ))
            else:
                lines.append(("You open the auction: play a card or a pair.", "bold yellow"))
        elif view.stage == DRAW:
            lines.append(("Draw to refill your hand, then end your turn.", "bold yellow"))
        elif view.stage == END_TURN:
            lines.append(("End your turn.", "bold yellow"))
        lines.append((f"Your hand ({plural(_count(view.hand), 'card')}): {view.hand}",
                      "bold green"))
        return lines

    def optional(self, view: View, moves: list[str]) -> list[str]:
        return [m for m in moves if m.startswith("call ")]

    def also(self, view: View, table: Table, me: int, moves: list[str]) -> str:
        calls = [m for m in moves if m.startswith("call ")]
        if not calls:
            return super().also(view, table, me, moves)
        who = ", ".join(seat_label(table, int(m.split()[1]), me) for m in calls)
        return (f"Also: {', '.join(moves)} — {who} forgot to draw: calling it gives them the "
                f"Oubli card (+1 point). Type {'it' if len(moves) == 1 else 'one'} any time.")

    def deal_over(self, view: View, table: Table, me: int | None) -> list[str]:
        if not view.history:
            return []
        last = view.history[-1]
        lines = [f"  {seat_label(table, last.ender, me)} played its last card"]
        for s, (n, p) in enumerate(zip(last.collected, last.points, strict=False)):
            oubli = " (with the Oubli card)" if s == last.oubli else ""
            lines.append(f"  {seat_label(table, s, me)}: {plural(n, 'card')} collected, "
                         f"{plural(p, 'point')}{oubli}")
        return lines


RENDERER = DobroRenderer()
