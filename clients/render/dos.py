"""Dos in the terminal: the centre row with this turn's matches, hands, bonus cards owed, the Dos
call window, scores against the target."""

from __future__ import annotations

from croupier.v1 import croupier_pb2, dos_pb2

from clients.render import Renderer, plural, seat_label

PLAYING = dos_pb2.DOS_PHASE_PLAYING
OPTIONAL = ("dos", "catch")  # a late Dos call and a catch: any seat may, none must
OVER = dos_pb2.DOS_PHASE_OVER

View = dos_pb2.DosView
Table = croupier_pb2.Table


def row_text(view: View) -> str:
    """The centre row, each matched card followed by what covers it: 'r7<-b7 y9 g#'."""
    cards = view.row.split()
    covered = {m.row_index: m.cards.replace(" ", "+") for m in view.matches}
    parts = [f"{c}<-{covered[i]}" if i in covered else c for i, c in enumerate(cards)]
    return " ".join(parts) if parts else "(empty)"


def sizes_text(view: View, table: Table, me: int | None) -> str:
    return "  ".join(f"{seat_label(table, s, me)} {n}" for s, n in enumerate(view.hand_sizes))


class DosRenderer(Renderer[View]):
    def public(self, view: View, table: Table, me: int | None) -> list[str]:
        lines = []
        if view.phase == OVER:
            lines.append(f"match over after {plural(len(view.history), 'round')}")
        else:
            lines.append(f"round {view.round + 1}, first to {view.target} points wins")
            who = seat_label(table, view.current, me)
            doing = ", drew a card" if view.drew else ""
            lines.append(f"Turn: {who}{doing} (turn {view.turns + 1} of the round)")
            lines.append(f"Centre row: {row_text(view)}")
            if view.adds:
                lines.append(f"Added to the row at the end of this turn: {view.adds}")
            lines.append(f"Cards left: {sizes_text(view, table, me)}")
            lines.append(f"Draw pile {view.draw_pile}, discards {len(view.discards.split())}")
            if view.dos_window >= 0:
                culprit = seat_label(table, view.dos_window, me)
                lines.append(f"{culprit} ended with two cards without calling Dos!")
        if any(view.totals):
            lines.append(
                "Scores: "
                + "  ".join(f"{seat_label(table, s, me)} {t}" for s, t in enumerate(view.totals))
            )
        return lines

    def stage(self, view: View) -> tuple[object, ...]:
        return (view.round, view.phase)

    def summary(self, view: View, table: Table) -> str:
        parts = [f"row {row_text(view)}", "cards " + "/".join(str(n) for n in view.hand_sizes)]
        parts.append(f"pile {view.draw_pile}")
        if view.dos_window >= 0:
            parts.append(f"Dos not called by {seat_label(table, view.dos_window)}")
        return " · ".join(parts)

    def turn(self, view: View, table: Table, me: int) -> list[tuple[str, str | None]]:
        lines: list[tuple[str, str | None]] = []
        if view.current == me:
            if view.bonus_owed:
                lines.append((f"Colour bonus: add {plural(view.bonus_owed, 'card')} from your "
                              "hand to the row ('add CARD').", "bold yellow"))
            elif view.drew:
                drawn = f" {view.drawn}" if view.drawn and view.drawn != "?" else ""
                lines.append((f"You drew{drawn}: match it now or end your turn.", None))
            elif not view.matches:
                lines.append(("Cover a centre card with one card of its number or two that add "
                              "up to it; or draw.", None))
        count = plural(len(view.hand.split()), "card")
        lines.append((f"Your hand ({count}): {view.hand}", "bold green"))
        return lines

    numbers_are_moves = False

    def optional(self, view: View, moves: list[str]) -> list[str]:
        return [m for m in moves if m in OPTIONAL]

    def auto_end(self, view: View, turn: list[str]) -> str | None:
        # with two cards the end carries the Dos call: calling it is never wrong
        if not turn or not set(turn) <= {"end", "end dos"}:
            return None
        return "end dos" if "end dos" in turn else "end"

    def also(self, view: View, table: Table, me: int, moves: list[str]) -> str:
        if "dos" in moves:
            return ("Also: dos — you ended your turn with two cards without calling Dos: type "
                    "'dos' now, before anyone catches you.")
        if "catch" in moves and view.dos_window >= 0:
            who = seat_label(table, view.dos_window, me)
            return (f"Also: catch — {who} ended with two cards without calling Dos: type "
                    "'catch' any time to make them draw two.")
        return super().also(view, table, me, moves)

    def deal_over(self, view: View, table: Table, me: int | None) -> list[str]:
        if not view.history:
            return []
        last = view.history[-1]
        who = seat_label(table, last.winner, me)
        how = "has the lowest hand when the turn limit ends the round" if last.blocked \
            else "went out"
        held = "  ".join(
            f"{seat_label(table, s, me)} {p}" for s, p in enumerate(last.hand_points)
            if s != last.winner
        )
        # the score is what the cards left in the other hands are worth (face value, 20 a
        # wild DOS, 40 a wild #: seeds/dos.md), not how many there are
        return [f"  {who} {how} and scores {plural(last.points, 'point')} "
                f"(points in the other hands: {held})"]


RENDERER = DosRenderer()
