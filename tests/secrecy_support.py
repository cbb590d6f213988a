"""Secrecy test helpers: the hidden cards of each game's state and where they must never show."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from croupier.v1 import dobro_pb2, doppelkopf_pb2, dos_pb2, dou_dizhu_pb2, sobe_e_desce_pb2
from google.protobuf.message import Message


@dataclass(frozen=True)
class Secrets:
    """Where one game keeps cards, as its State message spells them."""

    state: type[Message]
    split: Callable[[str], list[str]]
    join: Callable[[list[str]], str]
    per_seat: tuple[str, ...]  # repeated string fields, one entry per seat
    shared: tuple[str, ...] = ()  # string fields nobody sees (draw piles, stock, aside)
    mirrored: str = ""  # a per-seat field holding the same unplayed cards (dealt hands)


def _chars(text: str) -> list[str]:
    return list(text)


SECRETS: dict[str, Secrets] = {
    "dou_dizhu": Secrets(dou_dizhu_pb2.DouDizhuState, _chars, "".join, ("hands",)),
    "dobro": Secrets(dobro_pb2.DobroState, str.split, " ".join, ("hands",), ("pile", "aside")),
    "doppelkopf": Secrets(
        doppelkopf_pb2.DoppelkopfState, str.split, " ".join, ("hands",), mirrored="dealt"
    ),
    "dos": Secrets(dos_pb2.DosState, str.split, " ".join, ("hands",), ("pile",)),
    "sobe_e_desce": Secrets(
        sobe_e_desce_pb2.SobeEDesceState, str.split, " ".join, ("hands", "discards"),
        ("pending", "stock"),
    ),
}


def _split_text(sec: Secrets, text: str) -> list[str]:
    return sec.split(text.replace(",", " ").replace("+", " ").replace(":", " "))


def view_cards(sec: Secrets, view: Message) -> Counter[str]:
    """Every card token in any text of a view (played cards, own hand, kitty, tricks...)."""
    found: Counter[str] = Counter()

    def walk(m: Message) -> None:
        for _field, value in m.ListFields():
            single = isinstance(value, str | bytes | int | float | Message)
            for v in [value] if single else value:
                if isinstance(v, Message):
                    walk(v)
                elif isinstance(v, str):
                    found.update(_split_text(sec, v))

    walk(view)
    return found


DOU_DIZHU_RANKS = frozenset("3456789TJQKA2BR")


_WORD = re.compile(r"[0-9A-Za-z#]+")


_NOT_CARDS = re.compile(
    r"\b(?:seat(?:s|\(s\))?|version|expected_version|bid|players?|deals?|rounds?|makes"
    r"|value in play|play)\s+\d+\b(?:(?:\s*,\s*|\s+or\s+|\s+and\s+)\d+\b)*",
    re.IGNORECASE,
)


_DOBRO_TWO = re.compile(r"^(\d+|[JRS])(?:\1|s)$")  # 66, 1010, JJ; "two 6s": two of a card


def card_tokens(name: str, text: str) -> Counter[str]:
    """The words of `text` in the game's notation, numbers of seats, versions and bids left
    out; a word of several cards counts each (Dou Dizhu's 33345, Dobro's pairs 66 and plural
    6s). Which of them are cards is up to the caller, who knows where the cards are."""
    found: Counter[str] = Counter()
    for word in _WORD.findall(_NOT_CARDS.sub(" ", text)):
        if name == "dou_dizhu":
            if set(word) <= DOU_DIZHU_RANKS:
                found.update(word)
        elif name == "dobro" and (m := _DOBRO_TWO.match(word)):
            found[m.group(1)] += 2
        else:
            found[word] += 1
    return found


_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


def leaked(name: str, text: str, allowed: Counter[str], hidden: Counter[str],
           sent: str = "") -> list[str]:
    """The cards hidden from a reader that `text` names more often than the reader may know
    of them (`allowed`: what its view shows and what it sent itself). Quotes of what it
    sent (`sent`: the move text, as given or in another spelling) are left out first."""
    mine = card_tokens(name, sent)
    for quote in _QUOTED.findall(text):
        if card_tokens(name, quote) == mine:
            text = text.replace(quote, " ", 1)
    shown = card_tokens(name, text)
    return sorted(t for t in shown if t in hidden and shown[t] > allowed[t])
