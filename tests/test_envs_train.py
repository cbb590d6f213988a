"""The trained bot and its trainer, in small: the shipped weights choose legal moves for real
views, and a few episodes of training through the PettingZoo environment change the weights."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from croupier.v1 import croupier_pb2

from bench.train_policy import Policy, train
from engines.registry import get_game

pytest.importorskip("pettingzoo")

BOT_FILE = Path(__file__).resolve().parents[1] / "examples" / "trained_bot.py"


def _bot_module() -> Any:
    """examples/trained_bot.py as run from the repository (examples/ is not a package)."""
    spec = importlib.util.spec_from_file_location("trained_bot", BOT_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("trained_bot", module)
    spec.loader.exec_module(module)
    return module


bot_module = _bot_module()


def _table_view(game: str, state: object, seat: int, legal: list[str]) -> croupier_pb2.TableView:
    """The TableView the server sends the seat: the engine's view of it, its legal moves."""
    engine = get_game(game)
    view = croupier_pb2.TableView(
        table=croupier_pb2.Table(game=game, players=engine.num_players(state)),
        seat=seat,
        legal_moves=legal,
    )
    getattr(view.view, engine.info.view_field).CopyFrom(engine.view(state, seat))
    return view


def test_shipped_weights_choose_legal_moves_for_real_views() -> None:
    policy = bot_module.TrainedPolicy(bot_module.WEIGHTS)
    bot = bot_module.TrainedBot(policy)
    engine = get_game(policy.game)
    rng = random.Random(5)
    chose = 0
    for deal in range(2):
        state = engine.new_game(policy.players, policy.options, f"smoke-{deal}")
        while not engine.is_over(state):
            seat = min(engine.on_turn(state))
            legal = [engine.format_move(m) for m in engine.legal_moves(state, seat)]
            if seat == deal % policy.players:
                move = bot.choose(_table_view(policy.game, state, seat, legal), legal, 1.0)
                assert move in legal
                chose += len(legal) > 1
            else:
                move = rng.choice(legal)
            state = engine.apply(state, seat, engine.parse_move(move))
    assert chose > 5  # it had real choices to make, not only forced moves


def test_a_short_training_changes_the_weights_and_saves_them(tmp_path: Path) -> None:
    policy = train("dos", 2, {"target": 1}, episodes=6, hidden=4, lr=0.05, batch=2,
                   entropy=0.0, seed=3, log_every=0)
    assert policy.touched.any()
    assert np.abs(policy.w2).max() > 0 and np.abs(policy.w1 - Policy(
        policy.obs_dim, policy.num_actions, 4, np.random.default_rng(3)).w1).max() > 0
    path = tmp_path / "w.npz"
    policy.save(path, {"game": "dos", "players": 2, "options": {"target": 1}})
    loaded = bot_module.TrainedPolicy(path)
    obs = np.random.default_rng(0).random(policy.obs_dim).astype(np.float32)
    actions = np.flatnonzero(policy.touched)
    expected = policy.logits(policy.features(obs), actions)
    assert np.allclose(loaded.scores(obs, actions), expected, atol=0.05)
