"""Dou Dizhu moves: the combinations, their notation, comparison and fast generation.

Every move is interned: one `Move` object per distinct move, so legal-move lists are tuples of
shared objects cached under the rank masks they depend on (the hot path of the bots).

>>> Move("888+3")
Move('888+3')
>>> Move("888+3").beats(Move("666+4")), Move("5555").beats(Move("888+3"))
(True, True)
>>> str(Move("TTTJJJ+9944"))
'TTTJJJ+4499'
"""

from __future__ import annotations

from itertools import combinations

from engines.cache import remember
from engines.dou_dizhu.cards import (
    ACE,
    BIG_JOKER,
    CHAIN_RANKS,
    FULL_DECK,
    JOKERS,
    ONES,
    RANKS,
    SMALL_JOKER,
    contains,
    pack,
    rank_of_char,
)
from engines.interned import InternedMove

# Move kinds.
PASS, BID = 0, 1
SINGLE, PAIR, TRIO, TRIO_SINGLE, TRIO_PAIR = 2, 3, 4, 5, 6
CHAIN, PAIR_CHAIN, PLANE, PLANE_SINGLES, PLANE_PAIRS = 7, 8, 9, 10, 11
FOUR_SINGLES, FOUR_PAIRS, BOMB, ROCKET = 12, 13, 14, 15

KIND_NAMES = {
    PASS: "pass", BID: "bid", SINGLE: "single", PAIR: "pair", TRIO: "trio",
    TRIO_SINGLE: "trio with a single", TRIO_PAIR: "trio with a pair", CHAIN: "chain",
    PAIR_CHAIN: "chain of pairs", PLANE: "airplane", PLANE_SINGLES: "airplane with single wings",
    PLANE_PAIRS: "airplane with pair wings", FOUR_SINGLES: "four with two singles",
    FOUR_PAIRS: "four with two pairs", BOMB: "bomb", ROCKET: "rocket",
}
_UNIT = {SINGLE: 1, PAIR: 2, TRIO: 3, TRIO_SINGLE: 3, TRIO_PAIR: 3, CHAIN: 1, PAIR_CHAIN: 2,
         PLANE: 3, PLANE_SINGLES: 3, PLANE_PAIRS: 3, FOUR_SINGLES: 4, FOUR_PAIRS: 4, BOMB: 4}

_INTERN: dict[str, Move] = {}
_BY_ID: list[Move] = []
_BY_KEY: dict[tuple, Move] = {}


class Move(InternedMove):
    """One move: a bid, a pass or a combination of ranks (suits never matter).

    `rank` is the top rank of the main part (the bid value for bids), `length` the number of
    consecutive ranks in the main part, `cards` the packed rank counts the move plays.
    Construct from notation: `Move("333444+57")`; `str(move)` is the canonical notation.
    """

    __slots__ = ("kind", "rank", "length", "kickers", "cards", "text", "id", "n_cards")

    kind: int
    rank: int
    length: int
    kickers: tuple[int, ...]
    cards: int
    text: str
    id: int
    n_cards: int

    @property
    def is_play(self) -> bool:
        return self.kind > BID

    @property
    def is_bomb(self) -> bool:
        return self.kind >= BOMB

    def beats(self, other: Move) -> bool:
        """True if this combination may be played on `other`."""
        k = self.kind
        if k == ROCKET:
            return True
        ok = other.kind
        if k == BOMB:
            return ok < BOMB or (ok == BOMB and self.rank > other.rank)
        return k == ok and self.length == other.length and self.rank > other.rank


def _intern(kind: int, rank: int, length: int, kickers: tuple[int, ...]) -> Move:
    key = (kind, rank, length, kickers)
    move = _BY_KEY.get(key)
    if move is not None:
        return move
    text = _format(kind, rank, length, kickers)
    move = _INTERN.get(text)
    if move is not None:
        _BY_KEY[key] = move
        return move
    move = object.__new__(Move)
    move.kind, move.rank, move.length, move.kickers = kind, rank, length, kickers
    move.text = text
    move.id = len(_BY_ID)
    if kind > BID:
        cards = pack(kickers)
        if kind == ROCKET:
            cards = JOKERS
        else:
            unit = _UNIT[kind]
            for r in range(rank - length + 1, rank + 1):
                cards += unit << (4 * r)
        move.cards = cards
        move.n_cards = sum((cards >> (4 * r)) & 15 for r in range(15))
    else:
        move.cards = 0
        move.n_cards = 0
    _INTERN[text] = move
    _BY_KEY[key] = move
    _BY_ID.append(move)
    return move


def _format(kind: int, rank: int, length: int, kickers: tuple[int, ...]) -> str:
    if kind == PASS:
        return "pass"
    if kind == BID:
        return f"bid {rank}"
    if kind == ROCKET:
        return "BR"
    unit = _UNIT[kind]
    main = "".join(RANKS[r] * unit for r in range(rank - length + 1, rank + 1))
    if not kickers:
        return main
    return main + "+" + "".join(RANKS[r] for r in sorted(kickers))


PASS_MOVE = _intern(PASS, 0, 0, ())
BIDS = (PASS_MOVE, _intern(BID, 1, 0, ()), _intern(BID, 2, 0, ()), _intern(BID, 3, 0, ()))
ROCKET_MOVE = _intern(ROCKET, BIG_JOKER, 1, ())


# --- parsing ---------------------------------------------------------------------------

def parse_move(text: str) -> Move:
    """The move written `text`; ValueError naming what is malformed.

    Accepts the canonical notation and, for people, lower case, any order of the ranks
    inside a part, '10' for T and spaces.
    """
    if not isinstance(text, str):
        raise ValueError("a move must be text")
    raw = " ".join(text.split()).lower()
    if not raw:
        raise ValueError("empty move; write e.g. 'pass', 'bid 2', '7', '99', '888+3', '34567'")
    if raw == "pass":
        return PASS_MOVE
    if raw.startswith("bid"):
        value = raw[3:].strip()
        if value in ("1", "2", "3"):
            return BIDS[int(value)]
        raise ValueError(f"bad bid {text!r}: write 'bid 1', 'bid 2' or 'bid 3'")
    compact = raw.replace(" ", "").replace("10", "t")
    if compact.count("+") > 1:
        raise ValueError(f"bad move {text!r}: at most one '+' separates the kickers")
    main_text, _, kick_text = compact.partition("+")
    if not main_text:
        raise ValueError(f"bad move {text!r}: the main part before '+' is empty")
    if "+" in compact and not kick_text:
        raise ValueError(f"bad move {text!r}: no kickers after '+'")
    main = sorted(rank_of_char(c) for c in main_text)
    kick = tuple(sorted(rank_of_char(c) for c in kick_text))
    if not contains(FULL_DECK, pack(main) + pack(kick)):
        raise ValueError(f"bad move {text!r}: it uses more cards of a rank than the deck has")
    return _classify(text, main, kick)


def _classify(text: str, main: list[int], kick: tuple[int, ...]) -> Move:
    if main == [SMALL_JOKER, BIG_JOKER]:
        if kick:
            raise ValueError(f"bad move {text!r}: the rocket takes no kickers")
        return ROCKET_MOVE
    ranks = sorted(set(main))
    unit = main.count(ranks[0])
    if any(main.count(r) != unit for r in ranks):
        raise ValueError(
            f"bad move {text!r}: the main part must hold the same number of each rank "
            "(kickers go after '+', e.g. 888+3)"
        )
    n = len(ranks)
    if n > 1:
        if ranks[-1] > ACE:
            raise ValueError(f"bad move {text!r}: chains use only 3 to A (no 2, no jokers)")
        if ranks[-1] - ranks[0] != n - 1:
            raise ValueError(f"bad move {text!r}: the ranks of a chain must be consecutive")
    top = ranks[-1]
    if unit == 1:
        if n == 1:
            kind = SINGLE
        elif n >= 5:
            kind = CHAIN
        else:
            raise ValueError(f"bad move {text!r}: a chain of singles needs at least 5 ranks")
    elif unit == 2:
        if top >= SMALL_JOKER:
            raise ValueError(f"bad move {text!r}: there is only one joker of each colour")
        if n == 1:
            kind = PAIR
        elif n >= 3:
            kind = PAIR_CHAIN
        else:
            raise ValueError(f"bad move {text!r}: a chain of pairs needs at least 3 pairs")
    elif unit == 3:
        kind = TRIO if n == 1 else PLANE
    elif unit == 4:
        if n > 1:
            raise ValueError(f"bad move {text!r}: fours do not form chains")
        kind = BOMB
    else:
        raise ValueError(f"bad move {text!r}: too many cards of one rank")
    if not kick:
        return _intern(kind, top, n, ())
    if kind in (SINGLE, PAIR, CHAIN, PAIR_CHAIN):
        raise ValueError(f"bad move {text!r}: a {KIND_NAMES[kind]} takes no kickers")
    if set(kick) & set(ranks):
        raise ValueError(f"bad move {text!r}: kickers may not share a rank of the main part")
    units = 2 if kind == BOMB else n
    if len(kick) == units:  # singles
        if SMALL_JOKER in kick and BIG_JOKER in kick:
            raise ValueError(f"bad move {text!r}: the two jokers may not both be kickers")
        if kind == BOMB:
            if kick[0] == kick[1]:
                raise ValueError(
                    f"bad move {text!r}: the two singles of a four must differ in rank"
                )
            return _intern(FOUR_SINGLES, top, 1, kick)
        return _intern(TRIO_SINGLE if n == 1 else PLANE_SINGLES, top, n, kick)
    if len(kick) == 2 * units:  # pairs
        pairs = kick[::2]
        if kick[1::2] != pairs or len(set(pairs)) != units:
            raise ValueError(f"bad move {text!r}: pair kickers must be {units} distinct pairs")
        if pairs[-1] >= SMALL_JOKER:
            raise ValueError(f"bad move {text!r}: jokers do not form pairs")
        if kind == BOMB:
            return _intern(FOUR_PAIRS, top, 1, kick)
        return _intern(TRIO_PAIR if n == 1 else PLANE_PAIRS, top, n, kick)
    what = "a four" if kind == BOMB else f"a {KIND_NAMES[kind]}"
    raise ValueError(f"bad move {text!r}: {what} takes {units} single(s) or {units} pair(s) as kickers")


# --- generation ------------------------------------------------------------------------
# A hand's rank masks (bit 4r set when rank r has at least k cards) decide which moves of each
# family it holds; each family's moves are cached under the masks it depends on. A bot process
# meets new hands for as long as it lives, so every cache is bounded: one that reaches its size
# starts afresh (a lookup stays one dict.get; an LRU's bookkeeping cost random play 10%). The
# families of one rank mask fit whole. The other sizes come from the keys of 5 minutes of medium
# play replayed through caches of each size: past these, more entries would save under 1% of a
# decision's time (a miss costs 1-10 us) while holding tens of MB more.

CACHE_SIZES = {
    "singles": 1 << 15,  # every mask of 15 ranks
    "pairs": 1 << 13,  # 13 ranks pair up
    "trios": 1 << 13,
    "bombs": 1 << 12,  # a few hundred seen
    "trio_singles": 1 << 15,  # hits 22% of its lookups (56% if it kept every key)
    "trio_pairs": 1 << 15,  # 81% (89%)
    "plane_wings": 1 << 10,  # keyed on whole hands: under 1% hits at any size
    "fours": 1 << 10,  # under 4% at any size
    "lead": 1 << 17,  # 55% (65%); half as many cost random play 5%
    "follow": 1 << 18,  # 72% (89%); idem
}
_Cache = dict[int, tuple[Move, ...]]
_C1: _Cache = {}
_C2: _Cache = {}
_C3: _Cache = {}
_C4: _Cache = {}
_CT1: _Cache = {}
_CT2: _Cache = {}
_CPW: _Cache = {}
_CF: _Cache = {}
_LEAD: _Cache = {}
_FOLLOW: dict[tuple[int, int, int], tuple[Move, ...]] = {}
CACHES: dict[str, dict] = {
    "singles": _C1, "pairs": _C2, "trios": _C3, "bombs": _C4, "trio_singles": _CT1,
    "trio_pairs": _CT2, "plane_wings": _CPW, "fours": _CF, "lead": _LEAD, "follow": _FOLLOW,
}
_N1, _N2, _N3, _N4, _NT1, _NT2, _NPW, _NF, _NLEAD, _NFOLLOW = CACHE_SIZES.values()


def _bits(mask: int) -> list[int]:
    out = []
    r = 0
    while mask:
        if mask & 1:
            out.append(r)
        mask >>= 4
        r += 1
    return out


def _runs(mask: int, min_len: int, kind: int) -> list[Move]:
    """Every chain of at least min_len consecutive ranks (3..A) within the mask."""
    out = []
    ranks = _bits(mask & CHAIN_RANKS)
    present = set(ranks)
    for lo in ranks:
        hi = lo
        while hi + 1 in present:
            hi += 1
            if hi - lo + 1 >= min_len:
                out.append(_intern(kind, hi, hi - lo + 1, ()))
    return out


def _gen1(m1: int) -> tuple[Move, ...]:
    res = _C1.get(m1)
    if res is None:
        res = tuple([_intern(SINGLE, r, 1, ()) for r in _bits(m1)] + _runs(m1, 5, CHAIN))
        remember(_C1, _N1, m1, res)
    return res


def _gen2(m2: int) -> tuple[Move, ...]:
    res = _C2.get(m2)
    if res is None:
        res = tuple([_intern(PAIR, r, 1, ()) for r in _bits(m2)] + _runs(m2, 3, PAIR_CHAIN))
        remember(_C2, _N2, m2, res)
    return res


def _gen3(m3: int) -> tuple[Move, ...]:
    res = _C3.get(m3)
    if res is None:
        res = tuple([_intern(TRIO, r, 1, ()) for r in _bits(m3)] + _runs(m3, 2, PLANE))
        remember(_C3, _N3, m3, res)
    return res


def _gen4(key: int) -> tuple[Move, ...]:
    """Bombs and the rocket; key = fours mask | jokers present."""
    res = _C4.get(key)
    if res is None:
        out = [_intern(BOMB, r, 1, ()) for r in _bits(key & ~JOKERS)]
        if key & JOKERS == JOKERS:
            out.append(ROCKET_MOVE)
        res = tuple(out)
        remember(_C4, _N4, key, res)
    return res


def _gen_trio_single(m3: int, m1: int) -> tuple[Move, ...]:
    key = (m3 << 64) | m1
    res = _CT1.get(key)
    if res is None:
        singles = _bits(m1)
        res = tuple(
            _intern(TRIO_SINGLE, t, 1, (k,)) for t in _bits(m3) for k in singles if k != t
        )
        remember(_CT1, _NT1, key, res)
    return res


def _gen_trio_pair(m3: int, m2: int) -> tuple[Move, ...]:
    key = (m3 << 64) | m2
    res = _CT2.get(key)
    if res is None:
        pairs = _bits(m2)
        res = tuple(
            _intern(TRIO_PAIR, t, 1, (k, k)) for t in _bits(m3) for k in pairs if k != t
        )
        remember(_CT2, _NT2, key, res)
    return res


def _gen_plane_wings(h: int, m3: int, m2: int) -> tuple[Move, ...]:
    """Airplanes with single or pair wings: depends on the exact counts of the hand."""
    res = _CPW.get(h)
    if res is None:
        out: list[Move] = []
        for plane in _runs(m3, 2, PLANE):
            n, top = plane.length, plane.rank
            chain = set(range(top - n + 1, top + 1))
            pool = []  # each rank repeated as often as it may serve as a single wing
            for r in range(15):
                if r not in chain:
                    pool.extend([r] * min((h >> (4 * r)) & 15, n))
            if len(pool) >= n:
                for wings in sorted(set(combinations(pool, n))):
                    if SMALL_JOKER in wings and BIG_JOKER in wings:
                        continue
                    out.append(_intern(PLANE_SINGLES, top, n, wings))
            pair_ranks = [r for r in _bits(m2) if r not in chain]
            for ws in combinations(pair_ranks, n):
                out.append(_intern(PLANE_PAIRS, top, n, tuple(r for w in ws for r in (w, w))))
        res = tuple(out)
        remember(_CPW, _NPW, h, res)
    return res


def _gen_four(m4: int, m1: int, m2: int) -> tuple[Move, ...]:
    key = (m4 << 128) | (m2 << 64) | m1
    res = _CF.get(key)
    if res is None:
        out = []
        for f in _bits(m4):
            singles = [r for r in _bits(m1) if r != f]
            for a, b in combinations(singles, 2):
                if not (a == SMALL_JOKER and b == BIG_JOKER):
                    out.append(_intern(FOUR_SINGLES, f, 1, (a, b)))
            pairs = [r for r in _bits(m2) if r != f]
            for a, b in combinations(pairs, 2):
                out.append(_intern(FOUR_PAIRS, f, 1, (a, a, b, b)))
        res = tuple(out)
        remember(_CF, _NF, key, res)
    return res


def _masks(h: int) -> tuple[int, int, int, int]:
    p0 = h & ONES
    p1 = (h >> 1) & ONES
    p2 = (h >> 2) & ONES
    return p0 | p1 | p2, p1 | p2, p2 | (p1 & p0), p2


def lead_moves(h: int) -> tuple[Move, ...]:
    """Every combination the hand can lead."""
    res = _LEAD.get(h)
    if res is not None:
        return res
    m1, m2, m3, m4 = _masks(h)
    res = _gen1(m1) + _gen2(m2)
    if m3:
        res += _gen3(m3) + _gen_trio_single(m3, m1) + _gen_trio_pair(m3, m2)
        if m3 & (m3 >> 4) & CHAIN_RANKS:
            res += _gen_plane_wings(h, m3, m2)
    if m4:
        res += _gen4(m4 | (h & JOKERS)) + _gen_four(m4, m1, m2)
    elif h & JOKERS == JOKERS:
        res += (ROCKET_MOVE,)
    remember(_LEAD, _NLEAD, h, res)
    return res


def follow_moves(h: int, last: Move) -> tuple[Move, ...]:
    """Pass and every combination of the hand that beats `last`."""
    m1, m2, m3, m4 = _masks(h)
    kind = last.kind
    if kind in (SINGLE, CHAIN):
        key = m1
    elif kind in (PAIR, PAIR_CHAIN):
        key = m2
    elif kind in (TRIO, PLANE):
        key = m3
    elif kind == TRIO_SINGLE:
        key = (m3 << 64) | m1
    elif kind == TRIO_PAIR:
        key = (m3 << 64) | m2
    elif kind in (PLANE_SINGLES, PLANE_PAIRS):
        key = h
    elif kind in (FOUR_SINGLES, FOUR_PAIRS):
        key = (m4 << 128) | (m2 << 64) | m1
    else:
        key = 0
    bombs_key = m4 | (h & JOKERS)
    fkey = (last.id, key, bombs_key)
    res = _FOLLOW.get(fkey)
    if res is not None:
        return res
    if kind in (SINGLE, CHAIN):
        family = _gen1(m1)
    elif kind in (PAIR, PAIR_CHAIN):
        family = _gen2(m2)
    elif kind in (TRIO, PLANE):
        family = _gen3(m3) if m3 else ()
    elif kind == TRIO_SINGLE:
        family = _gen_trio_single(m3, m1) if m3 else ()
    elif kind == TRIO_PAIR:
        family = _gen_trio_pair(m3, m2) if m3 else ()
    elif kind in (PLANE_SINGLES, PLANE_PAIRS):
        family = _gen_plane_wings(h, m3, m2) if m3 & (m3 >> 4) & CHAIN_RANKS else ()
    elif kind in (FOUR_SINGLES, FOUR_PAIRS):
        family = _gen_four(m4, m1, m2) if m4 else ()
    else:
        family = ()
    length, rank = last.length, last.rank
    out = [PASS_MOVE]
    out.extend(m for m in family if m.kind == kind and m.length == length and m.rank > rank)
    if kind != ROCKET:
        for m in _gen4(bombs_key):
            if m.kind == ROCKET or kind != BOMB or m.rank > rank:
                out.append(m)
    res = tuple(out)
    remember(_FOLLOW, _NFOLLOW, fkey, res)
    return res


Move._interned = _INTERN
Move._parse = staticmethod(parse_move)
