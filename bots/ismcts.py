"""Single-observer information-set MCTS (Cowling, Powley & Whitehouse, 2012).

The searching seat sees only its view. Every iteration deals a determinization with the
engine's `sample`, walks the one shared tree restricted to the moves legal in that
determinization (UCB with availability counts: a child is compared only over the iterations in
which it was legal), expands one untried move, plays the deal out and backs up one reward per
seat. Partners get equal rewards from the engine's scores, so they cooperate without a special
case. Works for every engine through the contract alone.

>>> import random
>>> from engines.registry import GAMES, ENGINES
>>> game = GAMES[ENGINES[0]]
>>> state = game.new_game(game.info.min_players, {}, seed="doc")
>>> seat = min(game.on_turn(state))
>>> move, stats = search(game, game.view(state, seat), seat, random.Random(1), iterations=50)
>>> stats.iterations, move in game.legal_moves(state, seat)
(50, True)
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from engines.contract import Game

PlayoutPolicy = Callable[[Game, Any, int, Sequence[Any], random.Random], Any]
"""(game, state, seat, legal moves, rng) -> one of the legal moves."""

CandidateFilter = Callable[[Game, Any, int, Sequence[Any]], Sequence[Any]]
"""(game, state, seat, legal moves) -> the non-empty subset the tree considers."""

RewardFn = Callable[[Game, Sequence[int], Any], Sequence[float]]
"""(game, match totals when the deal began, state at its end) -> one reward in [0, 1] per seat."""


class Node:
    __slots__ = ("children", "visits", "reward", "avail")

    def __init__(self) -> None:
        self.children: dict[tuple[int, Any], Node] = {}
        self.visits = 0
        self.reward = 0.0
        self.avail = 1


@dataclass(frozen=True)
class SearchStats:
    iterations: int
    seconds: float
    visits: dict[str, int]  # root move text -> visits
    value: float  # mean reward of the chosen move for the searching seat


def rewards(game: Game, before: Sequence[int], state: Any) -> list[float]:
    """Per-seat reward in [0, 1] from the deal's score change: best seat 1, worst 0.

    Normalising by the spread keeps UCB's exploration constant meaningful for every game's
    scoring scale; partners (equal scores) get equal rewards.
    """
    after = game.result(state).totals
    gains = [a - b for a, b in zip(after, before, strict=True)]
    lo, hi = min(gains), max(gains)
    if hi == lo:
        return [0.5] * len(gains)
    span = hi - lo
    return [(g - lo) / span for g in gains]


def decisive_move(game: Game, view: Any, seat: int, rng: random.Random, checks: int = 3) -> Any:
    """A move that ends the deal as its best-scoring seat in every sampled world, if any.

    Going out is the commonest such move; the tree alone can miss it when hundreds of moves
    are legal and the budget is small.
    """
    worlds = [game.sample(view, rng) for _ in range(checks)]
    first = worlds[0]
    if seat not in game.to_act(first):
        return None
    deal0 = game.deal_number(first)
    totals = [game.result(w).totals for w in worlds]
    for move in game.legal_moves(first, seat):
        for world, before in zip(worlds, totals, strict=True):
            after = game.apply(world, seat, move)
            if not (game.is_over(after) or game.deal_number(after) != deal0):
                break
            if rewards(game, before, after)[seat] < 1.0:
                break
        else:
            return move
    return None


def search(
    game: Game,
    view: Any,
    seat: int,
    rng: random.Random,
    iterations: int = 1000,
    seconds: float | None = None,
    exploration: float = 0.7,
    playout: PlayoutPolicy | None = None,
    candidates: CandidateFilter | None = None,
    prior: float = 0.0,
    reward: RewardFn | None = None,
    policy_opponents: bool = False,
    worlds: Callable[[random.Random], Any] | None = None,
) -> tuple[Any, SearchStats]:
    """The move for `seat` after at most `iterations` iterations or `seconds` of search.

    With no time limit the result depends only on the view, the rng state and the budget.
    `candidates` narrows the moves the tree considers (for every seat); `playout` plays the
    deal out (uniformly random when None). `prior` > 0 (with a `playout` policy) biases the
    root towards the policy's own choice: it is expanded first, its UCB score gets
    `prior / (1 + visits)` (progressive bias) and it wins ties of visits, so that a small
    budget falls back on the policy rather than on noise while a large one lets the statistics
    decide. `reward` scores a played-out deal (default `rewards`: the deal's score change
    relative to the other seats); a game whose matches count more than each deal's ranking
    gives its own (the points, say; see `bots.heuristics`). `policy_opponents` (with a
    `playout` policy): below the root the other seats play the policy on their own cards of
    each world instead of choosing by the tree's statistics, which pool every hand they might
    hold and so play them as if blind to their own cards; only the searching seat's moves are
    searched.
    `worlds` deals each iteration's determinization in place of `game.sample(view, rng)`
    (e.g. `bots.inference.Worlds`, weighted by what the others' moves say about their cards).
    Which games use which option, as measured: docs/levels.md.
    """
    start = time.perf_counter()
    deadline = start + seconds if seconds else None
    first = game.sample(view, rng)
    only = game.legal_moves(first, seat)
    pool = only if candidates is None else candidates(game, first, seat, only)
    if len(only) == 1 or len(pool) == 1:  # nothing to decide (or worth searching): no search
        move = only[0] if len(only) == 1 else pool[0]
        return move, SearchStats(0, time.perf_counter() - start, {game.format_move(move): 0}, 0.0)
    decisive = decisive_move(game, view, seat, rng)
    if decisive is not None:
        text = game.format_move(decisive)
        return decisive, SearchStats(0, time.perf_counter() - start, {text: 0}, 1.0)
    root = Node()
    biased = prior > 0 and playout is not None
    root_favs: Any = ()
    if biased:
        # one favourite, chosen in the first world: stable even where the policy reads the
        # world's hidden cards
        root_favs = {(seat, playout(game, first, seat, pool, rng))}  # type: ignore[misc]
    sample, legal_moves, apply = game.sample, game.legal_moves, game.apply
    to_act, is_over, deal_number = game.to_act, game.is_over, game.deal_number
    log, sqrt = math.log, math.sqrt
    score_deal = reward or rewards
    by_policy = policy_opponents and playout is not None
    done = 0
    draw = worlds if worlds is not None else (lambda r: sample(view, r))
    for done in range(1, iterations + 1):  # noqa: B007 - `done` is read after the loop
        d = draw(rng)
        deal0 = deal_number(d)
        totals0 = game.result(d).totals
        node = root
        path: list[tuple[Node, int]] = []
        # selection and expansion
        while not is_over(d) and deal_number(d) == deal0:
            seats: Any = (seat,) if node is root else to_act(d)
            if by_policy and node is not root:
                s = next(iter(seats)) if len(seats) == 1 else rng.choice(sorted(seats))
                if s != seat:  # the others play their policy on their own cards of this world
                    legal = legal_moves(d, s)
                    e = (s, playout(game, d, s, legal, rng) if len(legal) > 1 else legal[0])  # type: ignore[misc]
                    child = node.children.get(e)
                    if child is None:
                        child = node.children[e] = Node()
                    d = apply(d, s, e[1])
                    node = child
                    continue
                seats = (s,)
            options = [(s, legal_moves(d, s)) for s in seats]
            if candidates is not None:
                options = [(s, candidates(game, d, s, ms)) for s, ms in options]
            edges = [(s, m) for s, ms in options for m in ms]
            # the policy's choice for each seat in this world: tried first, then favoured
            favs: Any = root_favs if node is root else ()
            children = node.children
            untried = [e for e in edges if e not in children]
            if untried:
                edge = next((e for e in untried if e in favs), None) if favs else None
                if edge is None:
                    edge = untried[rng.randrange(len(untried))] if len(untried) > 1 else untried[0]
                for e in edges:
                    child = children.get(e)
                    if child is not None:
                        child.avail += 1
                child = Node()
                children[edge] = child
                d = apply(d, edge[0], edge[1])
                path.append((child, edge[0]))
                break
            best_edge, best_child, best_score = edges[0], None, -1.0
            for e in edges:
                child = children[e]
                child.avail += 1
                score = child.reward / child.visits + exploration * sqrt(
                    log(child.avail) / child.visits
                )
                if e in favs:
                    score += prior / (1 + child.visits)
                if score > best_score:
                    best_edge, best_child, best_score = e, child, score
            assert best_child is not None
            d = apply(d, best_edge[0], best_edge[1])
            path.append((best_child, best_edge[0]))
            node = best_child
        # playout to the end of the deal
        while not is_over(d) and deal_number(d) == deal0:
            acting = to_act(d)
            s = next(iter(acting)) if len(acting) == 1 else rng.choice(sorted(acting))
            legal = legal_moves(d, s)
            if playout is None:
                move = legal[rng.randrange(len(legal))] if len(legal) > 1 else legal[0]
            else:
                move = playout(game, d, s, legal, rng)
            d = apply(d, s, move)
        r = score_deal(game, totals0, d)
        for child, mover in path:
            child.visits += 1
            child.reward += r[mover]
        if deadline is not None and time.perf_counter() >= deadline:
            break
    own = [(e, c) for e, c in root.children.items() if e[0] == seat]
    if not own:
        raise ValueError(f"seat {seat} has no legal move in this view")
    # most visits; on a tie (a budget smaller than the moves to try leaves many at one visit)
    # the favourite, then the better mean
    (_, move), child = max(
        own, key=lambda ec: (ec[1].visits, ec[0] in root_favs, ec[1].reward / max(ec[1].visits, 1))
    )
    stats = SearchStats(
        iterations=done,
        seconds=time.perf_counter() - start,
        visits={game.format_move(e[1]): c.visits for e, c in own},
        value=child.reward / child.visits if child.visits else 0.0,
    )
    return move, stats
