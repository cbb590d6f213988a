"""Dou Dizhu as a research environment: every combination one action, the view as floats.

Actions
-------
One fixed table of every move the rules allow (seeds/dou_dizhu.md) that fits in a hand of at
most 20 cards (the landlord's): built once, in this order, each block sorted by length, then
top rank, then kickers ascending. Suits never matter, so a move is its rank multiset plus how
it is read (kind, length, kickers), exactly the engine's interned `Move`.

======  ==========  =====  ==================================================================
first   last        count  meaning
======  ==========  =====  ==================================================================
0       0           1      pass (in the bidding and in play)
1       3           3      bid 1, bid 2, bid 3
4       18          15     single 3 .. R
19      31          13     pair 33 .. 22
32      44          13     trio 333 .. 222
45      226         182    trio with a single (any other rank, jokers included)
227     382         156    trio with a pair (any other rank but the jokers)
383     418         36     chain of 5..12 singles (3..A)
419     470         52     chain of 3..10 pairs (3..A)
471     515         45     airplane of 2..6 trios, no wings (3..A)
516     23760       23245  airplane of 2..5 trios with single wings (may share a rank, not BR)
23761   26699       2939   airplane of 2..4 trios with pair wings (distinct ranks, no jokers)
26700   27869       1170   four with two singles (distinct ranks, not both jokers)
27870   28727       858    four with two pairs (distinct ranks)
28728   28740       13     bomb 3333 .. 2222
28741   28741       1      rocket BR
======  ==========  =====  ==================================================================

`num_actions` is 28742. (OpenSpiel's `dou_dizhu` has 26057: it has no four-with-two
and never uses four equal single wings.)
`action_name(a)` is the engine's canonical notation; `parse_move(action_name(a))` is the move.
Worked example: `888+3` is action 45 + 5*14 + 0 = 115 (trio of 8, rank 5, first kicker 3);
`BR` is 28741; `bid 2` is 2; `pass` is 0.

Observation
-----------
float32, shape (OBS_SIZE,) = (660,), built from the seat's view message only. Seats are
relative to the viewer: r = (seat - viewer) mod 3, so r=0 is oneself, r=1 the next seat (who
plays after), r=2 the one before. A spectator (seat -1) sees as seat 0 with an empty hand.
A "cards" block is 54 floats: for each rank 3..2 (13 ranks) four thermometer bits (at least
1, 2, 3, 4 cards of the rank) at 4*rank..4*rank+3, then the small joker at 52 and the big
joker at 53.

======  ======  ===========================================================================
offset  length  meaning
======  ======  ===========================================================================
0       54      own hand (cards)
54      162     cards played this deal by r = 0, 1, 2 (3 cards blocks)
216     54      unseen cards: the deck less own hand and everything played (cards)
270     54      the kitty once shown (cards; zeros before)
324     1       1 if the kitty is shown
325     54      the combination to beat (cards; zeros when leading or bidding)
379     14      its kind, one-hot: single, pair, trio, trio+1, trio+2, chain, pair chain,
                airplane, airplane+singles, airplane+pairs, four+2 singles, four+2 pairs,
                bomb, rocket
393     1       its length (ranks in the main part) / 12
394     3       who played it, r one-hot (zeros when leading)
397     165     last move of this deal's play by r = 0, 1, 2: 55 each, cards then 1 if it
                was a pass (all zeros if the seat has not moved in play yet)
562     3       cards in hand of r = 0, 1, 2, / 20
565     4       1 for each r = 0, 1, 2 that has played a combination this deal, then 1 if
                the landlord has played more than one (the spring rule)
569     15      the face-up card's rank, one-hot 3 .. R
584     3       its holder, r one-hot
587     3       the landlord, r one-hot (zeros while bidding)
590     4       current bid, one-hot 0 (none), 1, 2, 3
594     49      the bidding, 7 slots in order (the longest bidding has 7 calls): each r
                one-hot (3) then the call one-hot pass, 1, 2, 3 (4); unused slots zero
643     3       phase one-hot: bidding, playing, over
646     3       to act, r one-hot (zeros when over)
649     3       the dealer, r one-hot
652     1       bombs and rockets played this deal / 14
653     1       log2 of the deal's value so far (bid x 2 per bomb) / 16
654     1       redeals in a row before this deal / max_redeals
655     1       deal number / deals
656     3       match totals of r = 0, 1, 2 as sign(t) log(1 + |t|) / 10
659     1       1 for a spectator's view
======  ======  ===========================================================================

Everything is from the view, so two deals the seat cannot tell apart give equal arrays.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from itertools import combinations, combinations_with_replacement
from typing import Any

import numpy as np
from croupier.v1 import dou_dizhu_pb2 as pb

from engines.cache import remember
from engines.dou_dizhu.cards import ACE, BIG_JOKER, N_RANKS, RANKS, SMALL_JOKER, TWO
from engines.dou_dizhu.moves import (
    BID,
    BOMB,
    CHAIN,
    FOUR_PAIRS,
    FOUR_SINGLES,
    PAIR,
    PAIR_CHAIN,
    PASS,
    PLANE,
    PLANE_PAIRS,
    PLANE_SINGLES,
    ROCKET,
    SINGLE,
    TRIO,
    TRIO_PAIR,
    TRIO_SINGLE,
    Move,
    parse_move,
)

PLAYERS = 3
MAX_HAND = 20
"""The landlord's 17 + 3: no move holds more cards, so longer combinations get no action."""

Key = tuple[int, int, int, tuple[int, ...]]
"""A move's reading: (kind, top rank of the main part, length, kickers ascending)."""

_UNIT = {SINGLE: 1, PAIR: 2, TRIO: 3, TRIO_SINGLE: 3, TRIO_PAIR: 3, CHAIN: 1, PAIR_CHAIN: 2,
         PLANE: 3, PLANE_SINGLES: 3, PLANE_PAIRS: 3, FOUR_SINGLES: 4, FOUR_PAIRS: 4, BOMB: 4}


def _runs(min_len: int, max_len: int) -> list[tuple[int, int]]:
    """(top rank, length) of every run of 3..A of the given lengths, shortest first."""
    return [(lo + n - 1, n) for n in range(min_len, max_len + 1) for lo in range(ACE - n + 2)]


def _single_wings(chain: range, n: int) -> list[tuple[int, ...]]:
    """Multisets of n single wings outside the chain: at most 4 of a rank, never both jokers."""
    ranks = [r for r in range(N_RANKS) if r not in chain]
    out = []
    for wings in combinations_with_replacement(ranks, n):
        if SMALL_JOKER in wings and BIG_JOKER in wings:
            continue
        if wings.count(SMALL_JOKER) > 1 or wings.count(BIG_JOKER) > 1:
            continue
        if any(wings.count(r) > 4 for r in set(wings)):
            continue
        out.append(wings)
    return out


def enumerate_keys() -> list[Key]:
    """Every move's reading, in action order (the table in the module docstring)."""
    keys: list[Key] = [(PASS, 0, 0, ()), (BID, 1, 0, ()), (BID, 2, 0, ()), (BID, 3, 0, ())]
    plain = range(TWO + 1)  # 3 .. 2: the ranks with four cards
    keys += [(SINGLE, r, 1, ()) for r in range(N_RANKS)]
    keys += [(PAIR, r, 1, ()) for r in plain]
    keys += [(TRIO, r, 1, ()) for r in plain]
    keys += [(TRIO_SINGLE, t, 1, (k,)) for t in plain for k in range(N_RANKS) if k != t]
    keys += [(TRIO_PAIR, t, 1, (k, k)) for t in plain for k in plain if k != t]
    keys += [(CHAIN, top, n, ()) for top, n in _runs(5, ACE + 1)]
    keys += [(PAIR_CHAIN, top, n, ()) for top, n in _runs(3, MAX_HAND // 2)]
    keys += [(PLANE, top, n, ()) for top, n in _runs(2, MAX_HAND // 3)]
    for top, n in _runs(2, MAX_HAND // 4):
        keys += [(PLANE_SINGLES, top, n, w) for w in _single_wings(range(top - n + 1, top + 1), n)]
    for top, n in _runs(2, MAX_HAND // 5):
        chain = range(top - n + 1, top + 1)
        free = [r for r in plain if r not in chain]
        keys += [(PLANE_PAIRS, top, n, tuple(r for w in ws for r in (w, w)))
                 for ws in combinations(free, n)]
    for f in plain:
        keys += [(FOUR_SINGLES, f, 1, (a, b))
                 for a, b in combinations([r for r in range(N_RANKS) if r != f], 2)
                 if (a, b) != (SMALL_JOKER, BIG_JOKER)]
    for f in plain:
        keys += [(FOUR_PAIRS, f, 1, (a, a, b, b))
                 for a, b in combinations([r for r in plain if r != f], 2)]
    keys += [(BOMB, r, 1, ()) for r in plain]
    keys.append((ROCKET, BIG_JOKER, 1, ()))
    return keys


def _notation(key: Key) -> str:
    """The canonical text of a reading (the engine parses it back and must agree)."""
    kind, top, n, kickers = key
    if kind == PASS:
        return "pass"
    if kind == BID:
        return f"bid {top}"
    if kind == ROCKET:
        return "BR"
    main = "".join(RANKS[r] * _UNIT[kind] for r in range(top - n + 1, top + 1))
    return main + ("+" + "".join(RANKS[r] for r in kickers) if kickers else "")


def _key(move: Move) -> Key:
    return (move.kind, move.rank, move.length, move.kickers)


class _Table:
    """The action table: readings, names, and the engine's interned moves by their id."""

    def __init__(self) -> None:
        self.keys = enumerate_keys()
        self.by_key: dict[Key, int] = {k: a for a, k in enumerate(self.keys)}
        self.moves = [parse_move(_notation(k)) for k in self.keys]
        self.names = [m.text for m in self.moves]
        by_id = [-1] * (max(m.id for m in self.moves) + 1)
        for a, m in enumerate(self.moves):
            by_id[m.id] = a
        self.by_id = by_id


_TABLE: _Table | None = None


def table() -> _Table:
    """The table, built on first use (under half a second)."""
    global _TABLE
    if _TABLE is None:
        _TABLE = _Table()
    return _TABLE


# --- observation -------------------------------------------------------------------------

CARDS = 54
_OFFSETS: dict[str, tuple[int, int]] = {}


def _layout(*blocks: tuple[str, int]) -> int:
    at = 0
    for name, length in blocks:
        _OFFSETS[name] = (at, length)
        at += length
    return at


OBS_SIZE = _layout(
    ("hand", CARDS), ("played", 3 * CARDS), ("unseen", CARDS), ("kitty", CARDS),
    ("kitty_shown", 1), ("to_beat", CARDS), ("to_beat_kind", ROCKET - SINGLE + 1),
    ("to_beat_length", 1), ("to_beat_seat", 3), ("last_moves", 3 * (CARDS + 1)),
    ("hand_sizes", 3), ("plays_made", 4), ("face_up_rank", N_RANKS), ("face_up_holder", 3),
    ("landlord", 3), ("bid", 4), ("bidding", 7 * 7), ("phase", 3), ("to_act", 3),
    ("dealer", 3), ("bombs", 1), ("value", 1), ("redeals", 1), ("deal", 1), ("totals", 3),
    ("spectator", 1),
)
OFFSETS: Mapping[str, tuple[int, int]] = _OFFSETS
"""Block name -> (offset, length), as the module docstring lays them out."""

_CHAR_INDEX = {c: r for r, c in enumerate(RANKS)}
_CARD_CACHE: dict[str, np.ndarray] = {}
_UNSEEN_CACHE: dict[tuple[str, ...], np.ndarray] = {}
_CACHE_LIMIT = 1 << 16
_BIDDING_SLOTS = 7
_CALL = {"pass": 0, "bid 1": 1, "bid 2": 2, "bid 3": 3}
_REL = tuple(tuple((s - me) % PLAYERS for s in range(PLAYERS)) for me in range(PLAYERS))
_PHASES = (pb.DOU_DIZHU_PHASE_BIDDING, pb.DOU_DIZHU_PHASE_PLAYING, pb.DOU_DIZHU_PHASE_OVER)
(_HAND, _PLAYED, _UNSEEN, _KITTY, _KITTY_SHOWN, _TO_BEAT, _TO_BEAT_KIND, _TO_BEAT_LENGTH,
 _TO_BEAT_SEAT, _LAST_MOVES, _HAND_SIZES, _PLAYS_MADE, _FACE_UP_RANK, _FACE_UP_HOLDER,
 _LANDLORD, _BID, _BIDDING, _PHASE, _TO_ACT, _DEALER, _BOMBS, _VALUE, _REDEALS, _DEAL,
 _TOTALS, _SPECTATOR) = (at for at, _ in _OFFSETS.values())


def cards_vector(text: str) -> np.ndarray:
    """The 54-float cards block of a rank string ('3345TTB', '888+3'): cached, do not write."""
    vec = _CARD_CACHE.get(text)
    if vec is None:
        vec = np.zeros(CARDS, dtype=np.float32)
        seen = [0] * N_RANKS
        for c in text:
            r = _CHAR_INDEX.get(c)
            if r is None:
                continue  # '+' between the main part and the kickers
            vec[4 * r + seen[r] if r <= TWO else 52 + r - SMALL_JOKER] = 1.0
            seen[r] += 1
        remember(_CARD_CACHE, _CACHE_LIMIT, text, vec)
    return vec


def _unseen(hand: str, played: list[str]) -> np.ndarray:
    """The cards block of the deck less the own hand and all cards played (cached)."""
    key = (hand, *played)
    vec = _UNSEEN_CACHE.get(key)
    if vec is None:
        left = [4] * (TWO + 1) + [1, 1]
        for text in key:
            for c in text:
                left[_CHAR_INDEX[c]] -= 1
        vec = np.zeros(CARDS, dtype=np.float32)
        for r, n in enumerate(left):
            if r <= TWO:
                vec[4 * r:4 * r + n] = 1.0
            elif n > 0:
                vec[52 + r - SMALL_JOKER] = 1.0
        remember(_UNSEEN_CACHE, _CACHE_LIMIT, key, vec)
    return vec


def _scaled_total(t: int) -> float:
    return math.copysign(math.log1p(abs(t)), t) / 10.0


class DouDizhuCodec:
    """The Codec of engines.envs.codec for Dou Dizhu (three players, every option set)."""

    game = "dou_dizhu"

    def num_actions(self, players: int, options: Mapping[str, Any]) -> int:
        return len(table().keys)

    def action(self, state: Any, seat: int, move: Any) -> int:
        t = _TABLE or table()
        try:
            a = t.by_id[move.id]
            if t.moves[a] is move:
                return a
        except (AttributeError, IndexError, TypeError):
            pass
        if not isinstance(move, Move):
            raise ValueError(f"not a Dou Dizhu move: {move!r}")
        a = t.by_key.get(_key(move), -1)
        if a < 0:
            raise ValueError(f"the move {move.text} has no action (more than 20 cards?)")
        return a

    def action_name(self, action: int, players: int, options: Mapping[str, Any]) -> str:
        names = table().names
        if not 0 <= action < len(names):
            raise ValueError(f"no action {action}: actions are 0..{len(names) - 1}")
        return names[action]

    def observation_shape(self, players: int, options: Mapping[str, Any]) -> tuple[int, ...]:
        return (OBS_SIZE,)

    def observe(self, view: Any, players: int, options: Mapping[str, Any]) -> np.ndarray:
        """One pass over the view's fields; the protobuf accesses are most of the cost, so
        each repeated field is read once and the play list only as far as needed."""
        v: pb.DouDizhuView = view
        obs = np.zeros(OBS_SIZE, dtype=np.float32)
        seat = v.seat
        rel = _REL[seat if 0 <= seat < PLAYERS else 0]
        hand = v.hand
        played = list(v.played)
        obs[_HAND:_HAND + CARDS] = cards_vector(hand)
        for s, text in enumerate(played):
            if text:
                at = _PLAYED + CARDS * rel[s]
                obs[at:at + CARDS] = cards_vector(text)
        obs[_UNSEEN:_UNSEEN + CARDS] = _unseen(hand, played)
        landlord = v.landlord
        if landlord >= 0:
            obs[_KITTY:_KITTY + CARDS] = cards_vector(v.kitty)
            obs[_KITTY_SHOWN] = 1.0
            obs[_LANDLORD + rel[landlord]] = 1.0
        to_beat = v.to_beat
        if to_beat:
            obs[_TO_BEAT:_TO_BEAT + CARDS] = cards_vector(to_beat)
            move = Move(to_beat)
            obs[_TO_BEAT_KIND + move.kind - SINGLE] = 1.0
            obs[_TO_BEAT_LENGTH] = move.length / 12.0
            to_beat_seat = v.to_beat_seat
            if to_beat_seat >= 0:
                obs[_TO_BEAT_SEAT + rel[to_beat_seat]] = 1.0
        plays = v.plays
        if len(plays):
            self._plays(obs, plays, played, landlord, rel)
        for s, size in enumerate(v.hand_sizes):
            obs[_HAND_SIZES + rel[s]] = size / MAX_HAND
        face_up = v.face_up_card
        if face_up:
            obs[_FACE_UP_RANK + _CHAR_INDEX[face_up[0]]] = 1.0
        holder = v.face_up_holder
        if 0 <= holder < PLAYERS:
            obs[_FACE_UP_HOLDER + rel[holder]] = 1.0
        bid = v.bid
        obs[_BID + bid] = 1.0
        at = _BIDDING
        for i, b in enumerate(v.bidding):
            if i == _BIDDING_SLOTS:
                break
            obs[at + rel[b.seat]] = 1.0
            obs[at + 3 + _CALL.get(b.move, 0)] = 1.0
            at += 7
        phase = v.phase
        if phase in _PHASES:
            obs[_PHASE + phase - _PHASES[0]] = 1.0
        to_act = v.to_act
        if to_act >= 0:
            obs[_TO_ACT + rel[to_act]] = 1.0
        obs[_DEALER + rel[v.dealer % PLAYERS]] = 1.0
        bombs = v.bombs
        if bombs:
            obs[_BOMBS] = bombs / 14.0
        if bid > 0:
            obs[_VALUE] = (math.log2(bid) + bombs) / 16.0
        if v.redeals:
            obs[_REDEALS] = v.redeals / max(v.max_redeals, 1)
        if v.deal_number:
            obs[_DEAL] = v.deal_number / max(v.deals, 1)
        if len(v.history):  # the totals are the finished deals' scores
            for s, t in enumerate(v.totals):
                if t:
                    obs[_TOTALS + rel[s]] = _scaled_total(t)
        if seat < 0:
            obs[_SPECTATOR] = 1.0
        return obs

    @staticmethod
    def _plays(
        obs: np.ndarray, plays: Any, played: list[str], landlord: int, rel: tuple[int, ...]
    ) -> None:
        """Each seat's last move (play rotates, so the last three entries), who has played,
        and whether the landlord played more than his opening (he played more cards than
        it): each entry read from the protobuf list costs a few hundred ns, and the list is
        long, so only four entries are read."""
        n = len(plays)
        missing = PLAYERS
        seen = [False, False, False]
        for i in range(n - 1, -1, -1):
            p = plays[i]
            s = p.seat
            if seen[s]:
                continue
            seen[s] = True
            at = _LAST_MOVES + (CARDS + 1) * rel[s]
            text = p.move
            if text == "pass":
                obs[at + CARDS] = 1.0
            else:
                obs[at:at + CARDS] = cards_vector(text)
            missing -= 1
            if not missing:
                break
        for s, text in enumerate(played):
            if text:
                obs[_PLAYS_MADE + rel[s]] = 1.0
        if landlord >= 0 and played[landlord]:
            opening = plays[0]
            if opening.seat == landlord:  # he leads the deal: more cards than it, more plays
                if len(played[landlord]) > Move(opening.move).n_cards:
                    obs[_PLAYS_MADE + 3] = 1.0
            else:  # not a view of this engine's play order: count
                made = 0
                for p in plays:
                    if p.seat == landlord and p.move != "pass":
                        made += 1
                if made > 1:
                    obs[_PLAYS_MADE + 3] = 1.0


CODEC = DouDizhuCodec()
