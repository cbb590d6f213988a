"""Dou Dizhu in the terminal: hands grouped by rank, bidding, landlord and kitty, cards left."""

from __future__ import annotations

from itertools import groupby

from croupier.v1 import croupier_pb2, dou_dizhu_pb2

from clients.render import Renderer, plural, seat_label, signed

RANKS = "3456789TJQKA2BR"
BIDDING = dou_dizhu_pb2.DOU_DIZHU_PHASE_BIDDING
PLAYING = dou_dizhu_pb2.DOU_DIZHU_PHASE_PLAYING
OVER = dou_dizhu_pb2.DOU_DIZHU_PHASE_OVER
PHASES = {BIDDING: "bidding", PLAYING: "playing", OVER: "over"}

View = dou_dizhu_pb2.DouDizhuView
Table = croupier_pb2.Table


def hand_text(hand: str) -> str:
    """Cards grouped by rank, weakest first: '33 4 5 TT B'."""
    cards = hand.split() if " " in hand.strip() else list(hand.strip())
    if all(c in RANKS for c in cards):
        cards.sort(key=RANKS.index)
        return " ".join("".join(group) for _, group in groupby(cards))
    return " ".join(cards)


class DouDizhuRenderer(Renderer[View]):
    def public(self, view: View, table: Table, me: int | None) -> list[str]:
        lines = []
        if view.phase == OVER:
            lines.append(f"match over after {plural(len(view.history), 'deal')}")
        else:
            deal = f"deal {view.deal_number + 1}"
            if view.deals:
                deal += f" of {view.deals}"
            phase = PHASES.get(view.phase, "")
            lines.append(f"{deal}, {phase}" if phase else deal)
            if view.redeals:
                lines.append(f"Redealt {plural(view.redeals, 'time')} after everybody passed")
        if view.landlord >= 0 and view.phase != BIDDING:
            kitty = f", kitty {hand_text(view.kitty)}" if view.kitty else ""
            landlord = seat_label(table, view.landlord, me)
            lines.append(f"Landlord: {landlord} at bid {view.bid}{kitty}")
        else:
            if view.face_up_card:
                holder = seat_label(table, view.face_up_holder, me)
                lines.append(f"Face-up card: {view.face_up_card}, dealt to {holder}")
            bids = ", ".join(f"{seat_label(table, a.seat, me)}: {a.move}" for a in view.bidding)
            lines.append(f"Bidding: {bids or 'no bids yet'}; highest bid {view.bid or 'none'}")
        sizes = "  ".join(f"{seat_label(table, s, me)} {n}" for s, n in enumerate(view.hand_sizes))
        if sizes:
            lines.append(f"Cards left: {sizes}")
        if view.bombs:
            lines.append(f"Bombs and rockets this deal: {view.bombs}")
        if view.totals and any(view.totals):
            lines.append(
                "Match totals: "
                + "  ".join(
                    f"{seat_label(table, s, me)} {signed(t)}" for s, t in enumerate(view.totals)
                )
            )
        return lines

    def stage(self, view: View) -> tuple[object, ...]:
        return (view.deal_number, view.phase, view.landlord)

    def summary(self, view: View, table: Table) -> str:
        parts = ["cards " + "/".join(str(n) for n in view.hand_sizes)]
        if view.phase == BIDDING:
            parts.append(f"bid {view.bid or 'none'}")
        elif view.phase == PLAYING:
            who = seat_label(table, view.to_beat_seat)
            parts.append(f"to beat {view.to_beat} ({who})" if view.to_beat else "leading")
        if view.bombs:
            parts.append(f"bombs {view.bombs}")
        return " · ".join(parts)

    def turn(self, view: View, table: Table, me: int) -> list[tuple[str, str | None]]:
        lines: list[tuple[str, str | None]] = []
        if view.phase == PLAYING:
            if view.to_beat:
                who = seat_label(table, view.to_beat_seat, me)
                lines.append((f"To beat: {view.to_beat} (from {who})", "bold yellow"))
            else:
                lines.append(("You lead: play any combination.", "bold yellow"))
        count = plural(len(view.hand.replace(" ", "")), "card")
        lines.append((f"Your hand ({count}): {hand_text(view.hand)}", "bold green"))
        return lines

    def deal_over(self, view: View, table: Table, me: int | None) -> list[str]:
        if not view.history:
            return []
        last = view.history[-1]
        extra = f", {plural(last.bombs, 'bomb')}" if last.bombs else ""
        extra += ", spring!" if last.spring else ""
        return [f"  landlord {seat_label(table, last.landlord, me)} at bid {last.bid}{extra}"]


RENDERER = DouDizhuRenderer()
