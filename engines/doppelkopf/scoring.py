"""Who wins a Doppelkopf deal and what it is worth (DDV tournament rules where the seed is
silent; seeds/doppelkopf.md, "Scoring").

Levels per party: 0 nothing, 1 re/kontra, 2 no 90, 3 no 60, 4 no 30, 5 schwarz.
"""

from __future__ import annotations

import re
from typing import NamedTuple

RE, KONTRA = 1, 0
_UNDER = (90, 60, 30)


class Outcome(NamedTuple):
    winner: int          # 1 Re, 0 Kontra, -1 nobody
    value: int           # game value from Re's side (negative: Kontra gained)
    items: tuple[str, ...]  # what was counted, e.g. ('won', 're announced', 'doppelkopf kontra')


def _needs(own_level: int, opp_level: int, own_is_re: bool) -> tuple[str, int]:
    """The party's winning condition: ('points', n) at least n card points, or
    ('tricks', n) at least n tricks (schwarz targets)."""
    if own_level >= 2:
        if own_level == 5:
            return ("all", 0)
        return ("points", 240 - _UNDER[own_level - 2] + 1)  # 151, 181, 211
    if opp_level >= 2:
        if opp_level == 5:
            return ("tricks", 1)
        return ("points", _UNDER[opp_level - 2])  # 90, 60, 30
    if own_is_re:
        return ("points", 120 if (own_level == 0 and opp_level == 1) else 121)
    return ("points", 121 if (own_level == 1 and opp_level == 0) else 120)


def _meets(need: tuple[str, int], points: int, tricks: int, opp_tricks: int) -> bool:
    kind, n = need
    if kind == "all":
        return opp_tricks == 0
    if kind == "tricks":
        return tricks >= n
    return points >= n


def winner(re_points: int, re_tricks: int, kontra_tricks: int, re_level: int,
           kontra_level: int) -> int:
    """1 if Re wins, 0 if Kontra wins, -1 if both miss their announced targets."""
    k_points = 240 - re_points
    re_ok = _meets(_needs(re_level, kontra_level, True), re_points, re_tricks, kontra_tricks)
    k_ok = _meets(_needs(kontra_level, re_level, False), k_points, kontra_tricks, re_tricks)
    if re_ok and not k_ok:
        return RE
    if k_ok and not re_ok:
        return KONTRA
    return -1


def _against(points: int, tricks: int, opp_level: int) -> int:
    """Points for reaching 120/90/60/30 against the opponents' no 90/60/30/schwarz."""
    n = 0
    for level, target in ((2, 120), (3, 90), (4, 60), (5, 30)):
        if opp_level >= level and points >= target:
            n += 1
    return n


def _held_items(points: int, tricks: int) -> list[str]:
    """The levels a party was held under: 'under 90', 'under 60', 'under 30', 'without a
    trick' (schwarz is about tricks: a trick worth nothing still counts)."""
    held = [f"under {limit}" for limit in _UNDER if points < limit]
    if tricks == 0:
        held.append("without a trick")
    return held


def outcome(re_points: int, re_tricks: int, kontra_tricks: int, re_level: int,
            kontra_level: int, specials: tuple[tuple[str, int], ...] = (),
            against_the_old: bool = False) -> Outcome:
    """The deal's winner and value. `specials` lists (name, party) special points already
    limited to the games that count them; `against_the_old` enables the extra point for a
    Kontra win (normal games and marriages)."""
    won = winner(re_points, re_tricks, kontra_tricks, re_level, kontra_level)
    points = {RE: re_points, KONTRA: 240 - re_points}
    tricks = {RE: re_tricks, KONTRA: kontra_tricks}
    levels = {RE: re_level, KONTRA: kontra_level}
    items: list[str] = []
    value = 0
    if won >= 0:
        loser = 1 - won
        base = 1
        items.append("won")
        for limit in _UNDER:
            if points[loser] < limit:
                base += 1
                items.append(f"under {limit}")
        if tricks[loser] == 0:
            base += 1
            items.append("schwarz")
        for party in (RE, KONTRA):
            if levels[party] >= 1:
                base += 2
                items.append(f"{'re' if party else 'kontra'} announced")
            for level in range(2, levels[party] + 1):
                base += 1
                items.append(f"{'re' if party else 'kontra'} {('no 90', 'no 60', 'no 30', 'schwarz')[level - 2]}")
        n = _against(points[won], tricks[won], levels[loser])
        if n:
            base += n
            items.append(f"reached against announcement x{n}")
        value = base if won == RE else -base
    else:
        # DDV 7.1.4 with 7.2.2/7.2.3: neither "won" nor the announcements count; each party
        # counts what it achieved against the other, and the balance goes to the party ahead
        items.append("nobody won")
        for party in (RE, KONTRA):
            name, other = ("re", "kontra") if party == RE else ("kontra", "re")
            held = _held_items(points[1 - party], tricks[1 - party])
            items.extend(f"{name} held {other} {what}" for what in held)
            n = _against(points[party], tricks[party], levels[1 - party])
            if n:
                items.append(f"{name} reached against announcement x{n}")
            value += (len(held) + n) if party == RE else -(len(held) + n)
    if against_the_old and won == KONTRA:
        value -= 1
        items.append("against the club queens")
    for name, party in specials:
        value += 1 if party == RE else -1
        items.append(f"{name} {'re' if party else 'kontra'}")
    return Outcome(won, value, tuple(items))


_ANNOUNCED = re.compile(r"(re|kontra) announced")
_LEVEL = re.compile(r"(re|kontra) (?:no (?:90|60|30)|schwarz)")
_AGAINST = re.compile(r"(?:(re|kontra) )?reached against announcement x(\d+)")
_HELD = re.compile(r"(re|kontra) held (?:re|kontra) .+")


def item_value(item: str, winner: int) -> int:
    """What one of `outcome`'s items adds to the deal's value, from Re's side (the items are
    its words: this reads them back, so a screen can show each with its points)."""
    towards_winner = 1 if winner == RE else -1
    if item in ("won", "schwarz") or item.startswith("under "):
        return towards_winner
    if item == "nobody won":
        return 0
    if _ANNOUNCED.fullmatch(item):
        return 2 * towards_winner
    if _LEVEL.fullmatch(item):
        return towards_winner
    found = _AGAINST.fullmatch(item)
    if found:  # a party named: nobody won, each counts its own
        n = int(found.group(2))
        return n * (towards_winner if found.group(1) is None else _side(found.group(1)))
    found = _HELD.fullmatch(item)
    if found:
        return _side(found.group(1))
    if item == "against the club queens":
        return -1
    name, _, party = item.rpartition(" ")  # a special point: '<name> re' or '<name> kontra'
    if name and party in ("re", "kontra"):
        return _side(party)
    raise ValueError(f"not a counted item: {item!r}")


def _side(party: str) -> int:
    return 1 if party == "re" else -1
