"""Dou Dizhu legal moves cross-checked against RLCard's Dou Dizhu (rlcard 1.2.0).

Positions come from three sources: random games played with our engine (uniform choice among
legal moves, bidding included), random games played with RLCard's own game class (its
incremental judger decides the leads), and synthetic hands rich in trios and fours so that the
rare airplane and four-with-two cases are exercised. At each position our legal move set must
equal RLCard's once RLCard's action strings are mapped to our notation and the rule
differences below are removed. Any other difference fails the test with examples.

RLCard writes a move as its cards in ascending rank order ('3334445B'); each of its 27,471
action strings has exactly one reading (a type such as 'trio_solo_chain_2' and a weight
giving the main part's lowest rank), which maps to one of our canonical moves ('333444+5B').

Rule differences (each is one named filter below; "ours only" moves are legal here and
unknown to RLCard, "RLCard only" moves the reverse):

- FOUR_WITH_PAIR_AS_SINGLES (RLCard only): RLCard's four_two_solo takes any two other cards,
  so a pair may be the two "singles" (5555+66); ours requires two different ranks.
- WING_TRIPLE_BESIDE_CHAIN (ours only): RLCard never takes three single wings of the rank just
  below or above the airplane (333444555+666, 444555666+333; a 2 above an A-topped chain is
  allowed) because its one reading per string makes those cards the longer bare airplane
  (333444555666); our rules allow any single wings that avoid the trios' ranks.
- WING_FOUR_OF_A_KIND (ours only): RLCard takes at most three cards of a rank as single wings
  ("attachments can not have bomb"), so 333444555666+7777 does not exist there; ours allows it.
- Following a move that the other side cannot name is skipped (counted, not compared): after a
  move in one of the classes above, the other engine would read the cards as another
  combination (RLCard reads 333444555+666 as the bare airplane 333444555666).

No difference (checked): both jokers are never wings of an airplane or the two singles of a
four; the kicker of a trio may be a joker or a 2, its pair a 2; pair wings and the two pairs of
a four are pairs of distinct ranks other than the main part's; chains stop at A. RLCard caps
the lengths of chains and airplanes (12 singles, 10 pairs, 6 bare trios, 5 trios with single
wings, 4 with pair wings); no hand of at most 20 cards can hold a longer one, so the caps never
differ. Beating is the same: same type and length with a higher main rank, any bomb over a
non-bomb, a higher bomb over a bomb, the rocket over everything.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from rlcard.games.base import Card
from rlcard.games.doudizhu.game import DoudizhuGame
from rlcard.games.doudizhu.judger import DoudizhuJudger
from rlcard.games.doudizhu.utils import CARD_TYPE, TYPE_CARD, get_gt_cards

from engines.dou_dizhu import GAME, Move
from engines.dou_dizhu.cards import ACE, RANKS, pack, parse_ranks, ranks_text
from engines.dou_dizhu.moves import follow_moves, lead_moves

RL_READING: dict[str, tuple[str, int]] = {s: (t[0][0], int(t[0][1])) for s, t in CARD_TYPE[0].items()}

# --- notation ---------------------------------------------------------------------------

_UNIT = {"solo": 1, "pair": 2, "trio": 3, "trio_solo": 3, "trio_pair": 3, "four_two_solo": 4,
         "four_two_pair": 4, "bomb": 4}
_KICKER_TYPES = {"trio_solo", "trio_pair", "four_two_solo", "four_two_pair"}


def rl_to_text(action: str) -> str:
    """Our canonical text of an RLCard action string, from RLCard's own reading of it.

    RLCard's weight is the lowest rank index of the main part, plus one for the types with
    kickers (trio_solo weight 1 is 333+x). KeyError if the string is not in its action space.
    """
    if action == "pass":
        return "pass"
    kind, weight = RL_READING[action]
    if kind == "rocket":
        return "BR"
    base, _, length = kind.partition("_chain_")
    n = int(length) if length else 1
    low = weight - 1 if base in _KICKER_TYPES else weight
    main = "".join(RANKS[r] * _UNIT[base] for r in range(low, low + n))
    rest = list(action)
    for c in main:
        rest.remove(c)  # ValueError if the reading does not fit the string
    return main + ("+" + "".join(rest) if rest else "")


def text_to_rl(text: str) -> str:
    """RLCard's action string for a move text of either side (cards in ascending order)."""
    if text == "pass":
        return "pass"
    return "".join(sorted(text.replace("+", ""), key=RANKS.index))


@dataclass(frozen=True)
class Shape:
    """A combination's parts as plain ranks: works for moves our parser rejects."""

    unit: int  # cards per rank in the main part
    main: tuple[int, ...]  # main ranks, ascending
    kickers: tuple[int, ...]  # kicker ranks, ascending

    @classmethod
    def of(cls, text: str) -> Shape:
        main_text, _, kick_text = text.partition("+")
        ranks = sorted({RANKS.index(c) for c in main_text})
        return cls(len(main_text) // len(ranks), tuple(ranks),
                   tuple(sorted(RANKS.index(c) for c in kick_text)))

    @property
    def plane_with_singles(self) -> bool:
        return self.unit == 3 and len(self.main) >= 2 and len(self.kickers) == len(self.main)


# --- the documented differences -----------------------------------------------------------


@dataclass(frozen=True)
class Difference:
    name: str
    side: str  # "ours": legal here only; "rlcard": legal in RLCard only
    reason: str
    applies: Callable[[Shape], bool]


def _four_with_pair_as_singles(s: Shape) -> bool:
    return s.unit == 4 and len(s.kickers) == 2 and s.kickers[0] == s.kickers[1]


def _wing_triple_beside_chain(s: Shape) -> bool:
    if not s.plane_with_singles:
        return False
    beside = {s.main[0] - 1, s.main[-1] + 1}
    return any(s.kickers.count(r) == 3 and r in beside and r <= ACE for r in set(s.kickers))


def _wing_four_of_a_kind(s: Shape) -> bool:
    return s.plane_with_singles and any(s.kickers.count(r) == 4 for r in set(s.kickers))


DIFFERENCES = (
    Difference(
        "FOUR_WITH_PAIR_AS_SINGLES", "rlcard",
        "RLCard's four_two_solo takes any two other cards, so a pair may be the two singles "
        "(5555+66); ours needs two different ranks",
        _four_with_pair_as_singles,
    ),
    Difference(
        "WING_TRIPLE_BESIDE_CHAIN", "ours",
        "RLCard never takes three single wings of the rank next to the airplane "
        "(333444555+666): with one reading per string those cards are the bare 333444555666",
        _wing_triple_beside_chain,
    ),
    Difference(
        "WING_FOUR_OF_A_KIND", "ours",
        "RLCard takes at most three cards of a rank as single wings, so 333444555666+7777 "
        "does not exist there",
        _wing_four_of_a_kind,
    ),
)


def explained(text: str, side: str) -> Difference | None:
    """The documented difference that makes `text` legal on `side` only, if any."""
    shape = Shape.of(text)
    for diff in DIFFERENCES:
        if diff.side == side and diff.applies(shape):
            return diff
    return None


# --- RLCard's move sets -------------------------------------------------------------------


def rl_cards(hand: str) -> list[Card]:
    return [Card(c + "J", "") if c in "BR" else Card("S", c) for c in hand]


class _Seat:
    """The two attributes RLCard's get_gt_cards reads from its players."""

    def __init__(self, hand: str = "", played: str = "") -> None:
        self.current_hand = rl_cards(hand)
        self.played_cards = played


def rl_lead(hand: str) -> set[str]:
    return set(DoudizhuJudger.playable_cards_from_hand(hand))


def rl_follow(hand: str, to_beat: str) -> set[str]:
    return set(get_gt_cards(_Seat(hand), _Seat(played=to_beat)))


# --- comparison -----------------------------------------------------------------------------


class Report:
    """Positions compared, moves removed by each named difference, and what stays unexplained."""

    def __init__(self) -> None:
        self.positions: Counter = Counter()
        self.filtered: Counter = Counter()  # moves removed, by difference name
        self.skipped: Counter = Counter()  # follow positions skipped, by difference name
        self.unexplained: list[str] = []

    def compare(self, source: str, hand: int, to_beat: str | None, ours: Iterable[Move],
                theirs: set[str]) -> None:
        self.positions[source, "lead" if to_beat is None else "follow"] += 1
        ours_texts = {m.text for m in ours}
        theirs_texts = set()
        for action in theirs:
            try:
                theirs_texts.add(rl_to_text(action))
            except (KeyError, ValueError):
                self._unexplained(source, hand, to_beat, "RLCard action outside its action "
                                  f"space or misread: {action!r}")
        for side, extra in (("ours", ours_texts - theirs_texts),
                            ("rlcard", theirs_texts - ours_texts)):
            for text in sorted(extra):
                diff = explained(text, side)
                if diff is None:
                    self._unexplained(source, hand, to_beat, f"only {side}: {text}")
                else:
                    self.filtered[diff.name] += 1

    def _unexplained(self, source: str, hand: int, to_beat: str | None, what: str) -> None:
        self.unexplained.append(
            f"[{source}] hand {ranks_text(hand)} "
            f"{'leading' if to_beat is None else 'to beat ' + to_beat}: {what}")

    def follow(self, source: str, hand: int, to_beat: str, ours: Iterable[Move]) -> None:
        """Compare a follow position of our engine, unless RLCard cannot name the move to beat."""
        if self.skip(to_beat, "ours"):
            return
        target = text_to_rl(to_beat)
        try:
            reading = rl_to_text(target)
        except (KeyError, ValueError):
            reading = "nothing (not in its action space)"
        if reading != to_beat:
            self._unexplained(source, hand, to_beat, f"RLCard reads the move to beat as {reading}")
            return
        self.compare(source, hand, to_beat, ours, rl_follow(ranks_text(hand), target))

    def skip(self, text: str, side: str) -> bool:
        """True (and counted) if the move to beat is one the other side cannot name."""
        diff = explained(text, side)
        if diff is not None:
            self.skipped[diff.name] += 1
            return True
        return False

    def summary(self) -> str:
        return (f"positions {dict(self.positions)}; filtered moves {dict(self.filtered)}; "
                f"skipped follow positions {dict(self.skipped)}")


def our_game_positions(games: int, report: Report) -> None:
    """Random games with our engine: every play position, compared with RLCard's sets."""
    for g in range(games):
        rng = random.Random(f"rlcard-xcheck/{g}")
        s = GAME.new_game(3, {}, seed=f"rlcard-xcheck/{g}")
        while not GAME.is_over(s):
            (seat,) = GAME.to_act(s)
            moves = GAME.legal_moves(s, seat)
            if moves[-1].is_play:  # bidding offers only pass and bids
                hand = s.hands[seat]
                hs = ranks_text(hand)
                if s.last is None:
                    report.compare("our games", hand, None, moves, rl_lead(hs))
                else:
                    report.follow("our games", hand, s.last.text, moves)
            s = GAME.apply(s, seat, rng.choice(moves))


def rlcard_game_positions(games: int, report: Report) -> None:
    """Random games with RLCard's game class; its actions against ours for the same hand."""
    import numpy as np

    for g in range(games):
        game = DoudizhuGame()
        game.np_random = np.random.RandomState(g)
        rng = random.Random(g)
        state, pid = game.init_game()
        while not game.is_over():
            hand = parse_ranks(state["current_hand"])
            greater = game.round.greater_player
            actions = set(state["actions"])
            if greater is None or greater.player_id == pid:
                report.compare("RLCard games", hand, None, lead_moves(hand), actions)
            else:
                text = rl_to_text(greater.played_cards)
                if not report.skip(text, "rlcard"):
                    report.compare("RLCard games", hand, text, follow_moves(hand, Move(text)),
                                   actions)
            state, pid = game.step(rng.choice(sorted(state["actions"])))


def rich_hand(rng: random.Random) -> int:
    """A hand of 8..20 cards around a run of 2..5 trios, often with fours."""
    count = [0] * 15
    n = rng.randint(2, 5)
    low = rng.randint(0, 12 - n)
    for r in range(low, low + n):
        count[r] = 3
    for _ in range(rng.randint(0, 2)):
        count[rng.randrange(13)] = 4
    size = 20 if rng.random() < 0.5 else rng.randint(8, 20)
    while sum(count) > size:
        count[rng.choice([r for r in range(15) if count[r]])] -= 1
    rest = [r for r in range(15) for _ in range((4 if r < 13 else 1) - count[r])]
    rng.shuffle(rest)
    for r in rest[: size - sum(count)]:
        count[r] += 1
    return pack(r for r in range(15) for _ in range(count[r]))


def synthetic_positions(hands: int, report: Report) -> None:
    """Rich hands leading, and following a random lead of another rich hand."""
    rng = random.Random("rlcard-xcheck/synthetic")
    for _ in range(hands):
        hand = rich_hand(rng)
        hs = ranks_text(hand)
        report.compare("rich hands", hand, None, lead_moves(hand), rl_lead(hs))
        last = rng.choice(lead_moves(rich_hand(rng)))
        report.follow("rich hands", hand, last.text, follow_moves(hand, last))


# --- tests ----------------------------------------------------------------------------------


def test_rlcard_action_space_maps_to_our_moves() -> None:
    """Every RLCard action string reads as one of our moves with the same cards, or as a
    documented RLCard-only move."""
    bad: list[str] = []
    rlcard_only: Counter[str] = Counter()
    for action in RL_READING:
        text = rl_to_text(action)
        diff = explained(text, "rlcard")
        if diff is not None:
            rlcard_only[diff.name] += 1
            continue
        try:
            move = Move(text)
        except ValueError as exc:
            bad.append(f"{action} -> {text}: {exc}")
            continue
        if move.text != text or ranks_text(move.cards) != action:
            bad.append(f"{action} -> {text} -> {move.text}")
    assert not bad, f"{len(bad)} RLCard actions unexplained, e.g. {bad[:10]}"
    assert rlcard_only == {"FOUR_WITH_PAIR_AS_SINGLES": 13 * 12}
    assert len(RL_READING) == 27471 and sum(len(v) for t in TYPE_CARD.values()
                                            for v in t.values()) == 27471


def test_legal_moves_match_rlcard() -> None:
    report = Report()
    our_game_positions(40, report)
    rlcard_game_positions(30, report)
    synthetic_positions(700, report)
    total = sum(report.positions.values())
    print(report.summary())
    assert not report.unexplained, (
        f"{len(report.unexplained)} unexplained differences with RLCard, e.g.:\n"
        + "\n".join(report.unexplained[:12]) + "\n" + report.summary())
    assert total >= 2000, report.summary()
    for source in ("our games", "RLCard games", "rich hands"):
        for situation in ("lead", "follow"):
            assert report.positions[source, situation] >= 100, report.summary()
    assert report.filtered.keys() == {d.name for d in DIFFERENCES}, report.summary()


def only_one_side(hand: str, to_beat: str | None = None) -> dict[str, tuple[str, str]]:
    """Every move legal on one side only, for a hand: text -> (side, difference name)."""
    h = parse_ranks(hand)
    if to_beat is None:
        ours, theirs = lead_moves(h), rl_lead(hand)
    else:
        ours, theirs = follow_moves(h, Move(to_beat)), rl_follow(hand, text_to_rl(to_beat))
    ours_texts = {m.text for m in ours}
    theirs_texts = {rl_to_text(a) for a in theirs}
    out = {}
    for side, extra in (("ours", ours_texts - theirs_texts), ("rlcard", theirs_texts - ours_texts)):
        for text in extra:
            diff = explained(text, side)
            out[text] = (side, diff.name if diff else "UNEXPLAINED")
    return out


def test_each_difference_is_real() -> None:
    """Small hands showing each documented difference."""
    pair = ("rlcard", "FOUR_WITH_PAIR_AS_SINGLES")
    triple = ("ours", "WING_TRIPLE_BESIDE_CHAIN")
    four = ("ours", "WING_FOUR_OF_A_KIND")
    assert only_one_side("555566") == {"5555+66": pair}
    assert only_one_side("55556677", "4444+39") == {"5555+66": pair, "5555+77": pair}
    assert only_one_side("3334445556669") == {"333444555+666": triple, "444555666+333": triple}
    assert only_one_side("JJJQQQKKKAAA") == {"JJJQQQKKK+AAA": triple, "QQQKKKAAA+JJJ": triple}
    # Three 2s above an A-topped airplane are wings on both sides.
    assert only_one_side("QQQKKKAAA222") == {}
    assert only_one_side("4445556667778888", "333444555666+789T") == {"444555666777+8888": four}
    lead = only_one_side("3334445556668888")
    assert lead["333444555666+8888"] == four and lead["333444555+666"] == triple
    assert set(lead.values()) == {four, triple, pair}
    # Both jokers: never wings, never the two singles of a four, on either side.
    assert only_one_side("333444BR") == {}
    assert only_one_side("3333BR") == {}
