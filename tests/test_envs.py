"""The research environments over every game that has a codec: PettingZoo's own api_test and
seed_test, OpenSpiel's random_sim_test (with serialization) and its ISMCTS bot, and what
the environments promise beyond those suites (rewards are the engine's scores, a seed deals
what a table with that seed deals, bad actions change nothing).

Games whose codec (engines/envs/<game>.py) is not there yet are skipped, so each codec is
tested here as soon as it lands. Episodes are one-deal matches, to keep this fast.
"""

from __future__ import annotations

import importlib.util
import random
import subprocess
import sys

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from engines.envs.aec import env, raw_env
from engines.registry import ENGINES, get_game


def _has_codec(game: str) -> bool:
    return importlib.util.find_spec(f"engines.envs.{game}") is not None


def _cases() -> list[object]:
    """(game, players) for every player count of every game, skipped without a codec."""
    out: list[object] = []
    for game in ENGINES:
        info = get_game(game).info
        counts = sorted({info.min_players, (info.min_players + info.max_players) // 2,
                         info.max_players})
        marks = [] if _has_codec(game) else [pytest.mark.skip(reason=f"no codec for {game} yet")]
        out.extend(pytest.param(game, n, id=f"{game}-{n}", marks=marks) for n in counts)
    return out


def _games() -> list[object]:
    return [
        pytest.param(g, marks=[] if _has_codec(g) else [pytest.mark.skip(reason="no codec")])
        for g in ENGINES
    ]


CASES = _cases()


# --- PettingZoo ----------------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")
@pytest.mark.parametrize(("game", "players"), CASES)
def test_pettingzoo_api(game: str, players: int) -> None:
    api_test(env(game, players), num_cycles=300)


@pytest.mark.parametrize(("game", "players"), CASES)
def test_pettingzoo_seed(game: str, players: int) -> None:
    seed_test(lambda: env(game, players), num_cycles=300)


def _random_episode(e: object, rng: random.Random) -> dict[str, float]:
    """Random legal actions to the end; each agent's summed rewards."""
    got: dict[str, float] = {}
    for agent in e.agent_iter():  # type: ignore[attr-defined]
        obs, reward, terminated, truncated, info = e.last()  # type: ignore[attr-defined]
        got[agent] = got.get(agent, 0.0) + reward
        if terminated or truncated:
            e.step(None)  # type: ignore[attr-defined]
            continue
        seat = int(agent.split("_")[1])
        engine_state = e.engine_state  # type: ignore[attr-defined]
        assert info["view"] == e.engine.view(engine_state, seat)  # type: ignore[attr-defined]
        legal = np.flatnonzero(obs["action_mask"])
        assert len(legal) == len(e.engine.legal_moves(engine_state, seat))  # type: ignore[attr-defined]
        assert seat in e.engine.on_turn(engine_state)  # type: ignore[attr-defined]
        e.step(int(rng.choice(legal)))  # type: ignore[attr-defined]
    return got


@pytest.mark.parametrize(("game", "players"), CASES)
def test_rewards_are_the_engine_scores(game: str, players: int) -> None:
    e = env(game, players)
    e.reset(seed=3)
    got = _random_episode(e, random.Random(3))
    result = e.engine.result(e.engine_state)
    assert result.finished
    assert [got[f"player_{i}"] for i in range(players)] == [float(t) for t in result.totals]


@pytest.mark.parametrize("game", _games())
def test_seed_deals_as_a_table_would(game: str) -> None:
    e = env(game)
    e.reset(seed=11)
    engine = e.engine
    table = engine.new_game(e.players, e.options, "11")
    assert engine.encode(e.engine_state) == engine.encode(table)
    e.reset()
    first = engine.encode(e.engine_state)
    e.reset(seed=11)
    e.reset()
    assert engine.encode(e.engine_state) == first  # resets after a seed follow from it


@pytest.mark.parametrize("game", _games())
def test_bad_actions_change_nothing(game: str) -> None:
    e = raw_env(game, render_mode="ansi")
    e.reset(seed=1)
    before = e.engine.encode(e.engine_state)
    mask = e.observe(e.agent_selection)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    for action in (illegal, -1, e.num_actions, None):
        with pytest.raises(ValueError, match="legal|None"):
            e.step(action)
    assert e.engine.encode(e.engine_state) == before
    text = e.render()
    assert text is not None and "to act" in text
    for action, move in e.legal_moves().items():
        assert f"{action}: {move}" in text


@pytest.mark.parametrize("game", _games())
def test_wrapped_as_classic_envs_are(game: str) -> None:
    """env() wraps as pettingzoo.classic does: an illegal action ends the episode with the
    rules' lowest return for the agent that chose it; out of range is an assertion; a step
    before reset is an error."""
    from pettingzoo.utils import wrappers

    from engines.envs.bounds import utility_bounds

    e = env(game)
    assert isinstance(e, wrappers.OrderEnforcingWrapper)
    assert isinstance(e.unwrapped, raw_env)
    with pytest.raises(Exception, match="reset"):
        e.step(0)
    e.reset(seed=1)
    before = e.engine.encode(e.engine_state)
    with pytest.raises(AssertionError, match="action space"):
        e.step(e.num_actions)
    agent = e.agent_selection
    mask = e.observe(agent)["action_mask"]
    e.step(int(np.flatnonzero(mask == 0)[0]))
    assert e.engine.encode(e.engine_state) == before  # the illegal move was not played
    low = utility_bounds(game, e.players, e.options)[0]
    rewards = {a: e._cumulative_rewards[a] for a in e.possible_agents}
    assert rewards[agent] == low and all(rewards[a] == 0 for a in rewards if a != agent)
    for _agent in e.agent_iter():
        assert e.last()[2] or e.last()[3]
        e.step(None)
    assert not e.agents


@pytest.mark.parametrize(("game", "players"), CASES)
def test_state_is_every_seats_observation(game: str, players: int) -> None:
    from pettingzoo.test.state_test import test_state, test_state_space

    e = env(game, players)
    test_state_space(e)
    test_state(e, num_cycles=50)  # random actions: illegal ones end the episode (wrapper)
    e.reset(seed=5)
    state = e.state()
    assert state.shape == e.state_space.shape and e.state_space.contains(state)
    parts = np.split(state, players)
    for seat in range(players):
        assert np.array_equal(parts[seat], e.observe(f"player_{seat}")["observation"])


def test_bad_construction() -> None:
    with pytest.raises(ValueError, match="unknown game"):
        env("chess")
    with pytest.raises(ValueError, match="2 to 4 players"):
        env("dos", 7)
    with pytest.raises(ValueError, match="unknown option"):
        env("dos", 2, {"colour": 1})
    with pytest.raises(ValueError, match="render_mode"):
        env("dos", 2, render_mode="video")


def test_no_parallel_wrapper_is_faked() -> None:
    # every game has one seat on turn at a time: aec_to_parallel does not apply
    e = env("dos", 3)
    assert e.metadata["is_parallelizable"] is False


# --- OpenSpiel -----------------------------------------------------------------------------

@pytest.mark.parametrize(("game", "players"), CASES)
def test_openspiel_random_sim(game: str, players: int) -> None:
    import pyspiel

    from engines.envs.spiel import load

    pyspiel.random_sim_test(load(game, players), num_sims=2, serialize=True, verbose=False)


@pytest.mark.parametrize("game", _games())
def test_openspiel_resample_keeps_the_information_state(game: str) -> None:
    import pyspiel

    from engines.envs.spiel import load

    g = load(game)
    rng = np.random.RandomState(4)
    state = g.new_initial_state()
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    checked = 0
    while not state.is_terminal() and checked < 30:
        if state.is_chance_node():
            state.apply_action(int(rng.choice([a for a, _ in state.chance_outcomes()])))
            continue
        p = state.current_player()
        other = state.resample_from_infostate(p, sampler)
        assert other.information_state_string(p) == state.information_state_string(p)
        assert other.information_state_tensor(p) == state.information_state_tensor(p)
        assert other.current_player() == p
        assert other.legal_actions() == state.legal_actions()
        state.apply_action(int(rng.choice(state.legal_actions())))
        checked += 1
    assert checked > 0


@pytest.mark.parametrize("game", _games())
def test_openspiel_ismcts_plays_a_whole_deal(game: str) -> None:
    from open_spiel.python.algorithms import ismcts, mcts

    from engines.envs.spiel import load

    g = load(game)
    rng = np.random.RandomState(2)
    bot = ismcts.ISMCTSBot(g, mcts.RandomRolloutEvaluator(1, rng), 2.0, max_simulations=4,
                           random_state=rng)
    state = g.new_initial_state()
    decisions = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(int(rng.choice([a for a, _ in state.chance_outcomes()])))
            continue
        action = bot.step(state)
        assert action in state.legal_actions()
        state.apply_action(action)
        decisions += 1
    assert decisions > 0
    totals = get_game(game).result(state._node.state).totals  # the engine's own scores
    assert state.returns() == [float(t) for t in totals]


def test_service_does_not_import_the_envs() -> None:
    code = (
        "import sys, service.server, service.cli; "
        "print(sorted(m for m in sys.modules if m.startswith(('engines.envs', 'pettingzoo', "
        "'pyspiel'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
