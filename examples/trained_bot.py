"""A Croupier bot playing a policy trained in the research environment (bench/train_policy.py).

It sees what any entrant sees (the seat's TableView), rebuilds the engine's view message from
it, encodes that with the game's codec (engines/envs) exactly as the PettingZoo environment
did in training, scores the actions of the listed legal moves with the trained weights and
plays the best one. Weights: examples/trained_bot_weights.npz (a small tanh layer and one row
of output weights per action; see bench/train_policy.py). At a table of another game or
player count than the weights were trained for, it plays the SDK's default (random) move.

Run it from the repository (after `make setup`) against a server with seats reserved for the
entrant, e.g. those of `croupier tournament dos --entrants random,ext:trained ...`:

    .venv/bin/python examples/trained_bot.py --entrant trained [--server 127.0.0.1:50051] \
        [--key API_KEY] [--weights examples/trained_bot_weights.npz]

Ctrl-C stops it cleanly: the seats of unfinished tables are given back.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

import numpy as np
from croupier.v1.croupier_pb2 import TableView
from google.protobuf import json_format

from bots import sdk
from engines.envs.registry import get_codec
from engines.registry import get_game

WEIGHTS = Path(__file__).with_name("trained_bot_weights.npz")


class TrainedPolicy:
    """The saved weights: logits = W2 . h + b2, h = tanh(W1 . obs + b1) (or obs if linear)."""

    def __init__(self, path: Path = WEIGHTS) -> None:
        with np.load(path) as z:
            meta = json.loads(str(z["meta"]))
            self.game: str = meta["game"]
            self.players: int = int(meta["players"])
            self.options: dict[str, Any] = dict(meta["options"])
            self.hidden = int(z["hidden"])
            self.num_actions = int(z["num_actions"])
            self.w1 = z["w1"].astype(np.float32)
            self.b1 = z["b1"].astype(np.float32)
            width = self.hidden or int(z["obs_dim"])
            self.w2 = np.zeros((self.num_actions, width), np.float32)
            self.b2 = np.zeros(self.num_actions, np.float32)
            self.w2[z["rows"]] = z["w2"]
            self.b2[z["rows"]] = z["b2"]

    def scores(self, obs: np.ndarray, actions: np.ndarray) -> np.ndarray:
        h = np.tanh(self.w1 @ obs + self.b1) if self.hidden else obs
        out: np.ndarray = self.w2[actions] @ h + self.b2[actions]
        return out


def table_options(view: TableView, trained: dict[str, Any]) -> dict[str, Any]:
    """The table's options as the codec takes them (JSON numbers back to ints); those it does
    not show (a fixed deck is never shown) from the training options."""
    opts = dict(trained)
    shown = json_format.MessageToDict(view.table.options)
    for name, value in shown.items():
        opts[name] = int(value) if isinstance(value, float) and value.is_integer() else value
    return opts


class TrainedBot(sdk.Bot):
    blocking = False  # a few small matrix products: answered at once

    def __init__(self, policy: TrainedPolicy | None = None) -> None:
        self.policy = policy or TrainedPolicy()
        self.rng = random.Random()

    def choose(self, view: TableView, legal_moves: list[str], time_left: float) -> str:
        policy = self.policy
        if view.table.game != policy.game or view.table.players != policy.players:
            return self.default_move(view, legal_moves)
        if len(legal_moves) == 1:
            return legal_moves[0]
        game = get_game(policy.game)
        codec = get_codec(policy.game)
        seat = view.seat
        seat_view = getattr(view.view, game.info.view_field)
        options = table_options(view, policy.options)
        # the codec maps a move to its action given a state; any world consistent with the
        # seat's view gives the same actions (what a move means is public or the seat's own)
        state = game.sample(seat_view, self.rng)
        actions = np.array(
            [codec.action(state, seat, game.parse_move(m)) for m in legal_moves], dtype=np.int64
        )
        obs = codec.observe(seat_view, policy.players, options).astype(np.float32, copy=False)
        scores = policy.scores(obs.reshape(-1), actions)
        return legal_moves[int(np.argmax(scores))]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="a Croupier bot playing trained weights")
    parser.add_argument("--server", default="127.0.0.1:50051")
    parser.add_argument("--entrant", required=True, help="the entrant name to play as")
    # the key (role entrant:<name>) from env CROUPIER_API_KEY or a file, never argv
    parser.add_argument("--key-file", default="", help="a file holding the API key")
    parser.add_argument("--weights", type=Path, default=WEIGHTS)
    args = parser.parse_args()
    bot = TrainedBot(TrainedPolicy(args.weights))  # one instance, weights loaded once, for every seat
    sys.exit(sdk.run(bot, args.server, args.entrant, key_file=args.key_file))
