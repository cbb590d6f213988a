"""Named bot strengths, as frontends offer them, each a documented budget.

| level | player | budget per decision |
|---|---|---|
| random | uniform over legal moves | none |
| heuristic | the game's rule-based player | none |
| easy | ISMCTS, biased towards the heuristic player's choice | 50 iterations |
| medium | ISMCTS | 200 iterations |
| hard | ISMCTS | 1,000 iterations or 1 s, whichever comes first |
| expert | ISMCTS | 4,000 iterations or 4 s, whichever comes first |

Every ISMCTS level plays its playouts with the game's heuristic player and searches only the
game's candidate moves (kicker variants cut to the cheapest; see `bots.heuristics`). Where a
game's module gives one, every ISMCTS level scores played-out deals with the game's own reward;
the budgets stay the same for every game. A decision with one legal move, one candidate move,
or a move that wins the deal outright, takes no search. At `easy`, 50 iterations are too few
to tell a dozen candidate moves apart, so the root is biased towards the heuristic player's
own choice (`prior`, see `bots.ismcts.search`): the search overrules it only where its
statistics clearly disagree. A game's module may set further search options for every level
(`SEARCH_OPTIONS`) or for one level (`LEVEL_OPTIONS`), and leave whole phases to its heuristic
player at every search level (`HEURISTIC_PHASES`). No level weighs its worlds by what the other
seats' moves say about their cards (`inference`, see `bots.inference`). docs/levels.md says
which games set what, and the measurements behind each choice.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, fields
from typing import Any

from bots.heuristics import (
    get_candidates,
    get_explains,
    get_heuristic,
    get_heuristic_phases,
    get_reward,
    get_search_options,
)
from bots.inference import Worlds
from bots.ismcts import SearchStats, search
from engines.contract import Game


@dataclass(frozen=True)
class Level:
    name: str
    kind: str  # "random", "heuristic" or "ismcts"
    iterations: int = 0
    seconds: float | None = None
    heuristic_playouts: bool = False
    pruned: bool = False  # search only the game's candidate moves (bots.heuristics)
    prior: float = 0.0  # root bias towards the heuristic player's choice (bots.ismcts)
    # None: the game's setting (bots.heuristics SEARCH_OPTIONS), else the search default
    policy_opponents: bool | None = None  # the other seats play the heuristic in the tree too
    # > 0: worlds weighted by the others' moves, each one the heuristic would not have made
    # multiplying a world's weight by this (bots.inference); 0: uniform worlds
    inference: float = 0.0

    def __repr__(self) -> str:
        """The dataclass's repr, less the options added after measurements keyed by it were
        recorded (bench results files) while they keep their defaults."""
        later = {"inference": 0.0}
        parts = [
            f"{f.name}={getattr(self, f.name)!r}" for f in fields(self)
            if f.name not in later or getattr(self, f.name) != later[f.name]
        ]
        return f"Level({', '.join(parts)})"

    @staticmethod
    def follows_heuristic(game: Game, view: Any) -> bool:
        """Whether this decision is one the game leaves to its heuristic player at every search
        level (`HEURISTIC_PHASES`, see `bots.heuristics`): no search, the heuristic's move."""
        phases = get_heuristic_phases(game.info.name)
        return bool(phases) and getattr(view, "phase", None) in phases

    def choose(
        self, game: Game, view: Any, seat: int, rng: random.Random
    ) -> tuple[Any, SearchStats | None]:
        """A legal move for `seat` from its engine view (the game's View message)."""
        if self.kind == "ismcts":
            if self.heuristic_playouts and self.follows_heuristic(game, view):
                start = time.perf_counter()
                state = game.sample(view, rng)
                legal = game.legal_moves(state, seat)
                if not legal:
                    raise ValueError(f"seat {seat} has no legal move in this view")
                move = get_heuristic(game.info.name)(game, state, seat, legal, rng)
                text = game.format_move(move)
                return move, SearchStats(0, time.perf_counter() - start, {text: 0}, 0.0)
            playout = get_heuristic(game.info.name) if self.heuristic_playouts else None
            prune = get_candidates(game.info.name) if self.pruned else None
            options = get_search_options(game.info.name, self.name)
            if self.policy_opponents is not None:
                options["policy_opponents"] = self.policy_opponents
            prior = options.pop("prior", self.prior)
            if not self.heuristic_playouts:
                prior = 0.0  # the prior is the heuristic player's choice: none without it
            epsilon = options.pop("inference", self.inference)
            explains = get_explains(game.info.name)
            if epsilon and explains is not None and type(game).replay is not Game.replay:
                pool = max(200, self.iterations // 4)  # a quarter of the budget, 200 at least
                options["worlds"] = Worlds(game, view, seat, rng, explains, pool, epsilon)
            return search(
                game, view, seat, rng, self.iterations, self.seconds, playout=playout,
                candidates=prune, prior=prior, reward=get_reward(game.info.name), **options,
            )
        state = game.sample(view, rng)
        legal = game.legal_moves(state, seat)
        if not legal:
            raise ValueError(f"seat {seat} has no legal move in this view")
        if self.kind == "heuristic":
            return get_heuristic(game.info.name)(game, state, seat, legal, rng), None
        return legal[rng.randrange(len(legal))], None


LEVELS: dict[str, Level] = {
    level.name: level
    for level in (
        Level("random", "random"),
        Level("heuristic", "heuristic"),
        Level("easy", "ismcts", iterations=50, heuristic_playouts=True, pruned=True, prior=2.0),
        Level("medium", "ismcts", iterations=200, heuristic_playouts=True, pruned=True),
        Level("hard", "ismcts", iterations=1000, seconds=1.0, heuristic_playouts=True, pruned=True),
        Level("expert", "ismcts", iterations=4000, seconds=4.0, heuristic_playouts=True,
              pruned=True),
    )
}


def get_level(name: str) -> Level:
    try:
        return LEVELS[name]
    except KeyError:
        raise ValueError(f"unknown bot level {name!r}; levels: {', '.join(LEVELS)}") from None
