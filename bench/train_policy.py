"""A small policy trained through the PettingZoo environment, as proof that the envs are usable.

REINFORCE with a baseline, in plain numpy: a softmax over the masked actions of
`engines.envs.aec.env`, its logits a linear function of a small tanh layer over the codec's
observation (`--hidden H`, the default keeping the weights small; `--hidden 0`: of the
observation itself). The learner takes one seat (rotated over the episodes) against opponents
playing uniformly over the legal actions, as the built-in `random` level picks among the legal
moves (the codec maps them one-to-one onto actions; unlike a table, the AEC env offers no
out-of-turn moves such as a Dos catch). The return of an episode is the seat's summed reward
(its change of match total, given when the deal ends); the advantage is that return less a
running mean, scaled by a running spread.

Then it evaluates the greedy policy (the most probable legal action) against random opponents
on fresh deals, seats rotated, beside random play in the same seat of the same deals, and prints
mean points per deal with 95% intervals (normal approximation), the paired difference and the
win rate (Wilson interval). The weights are saved for `examples/trained_bot.py`: only the rows
of actions that were legal at some point in training (the others keep their zero start and
would score 0 anyway), as float16 in a compressed npz.

    OMP_NUM_THREADS=1 nice .venv/bin/python -m bench.train_policy --game dos --players 2 \
        --episodes 6000 --eval-deals 4000 --out examples/trained_bot_weights.npz

(that made the shipped weights: about 100 CPU seconds of training, 90 of evaluation).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from engines.contract import option_argument
from engines.envs.episode import episode_setup


class Policy:
    """Logits = W2 . h(obs) + b2 over the actions, h = obs (linear) or tanh(W1 . obs + b1)."""

    def __init__(self, obs_dim: int, num_actions: int, hidden: int, rng: np.random.Generator) -> None:
        self.obs_dim, self.num_actions, self.hidden = obs_dim, num_actions, hidden
        width = hidden or obs_dim
        self.w1 = (rng.standard_normal((hidden, obs_dim)) / math.sqrt(obs_dim)).astype(np.float32)
        self.b1 = np.zeros(hidden, np.float32)
        self.w2 = np.zeros((num_actions, width), np.float32)
        self.b2 = np.zeros(num_actions, np.float32)
        self.touched = np.zeros(num_actions, bool)  # rows that ever had a gradient

    def features(self, obs: np.ndarray) -> np.ndarray:
        if not self.hidden:
            return obs
        out: np.ndarray = np.tanh(self.w1 @ obs + self.b1)
        return out

    def logits(self, h: np.ndarray, legal: np.ndarray) -> np.ndarray:
        out: np.ndarray = self.w2[legal] @ h + self.b2[legal]
        return out

    def params(self) -> list[np.ndarray]:
        return [self.w1, self.b1, self.w2, self.b2]

    def save(self, path: Path, meta: Mapping[str, Any]) -> None:
        rows = np.flatnonzero(self.touched).astype(np.int32)
        np.savez_compressed(
            path, meta=np.array(json.dumps(dict(meta))), hidden=np.int32(self.hidden),
            num_actions=np.int32(self.num_actions), obs_dim=np.int32(self.obs_dim),
            w1=self.w1.astype(np.float16), b1=self.b1.astype(np.float16), rows=rows,
            w2=self.w2[rows].astype(np.float16), b2=self.b2[rows].astype(np.float16),
        )

    @classmethod
    def load(cls, path: Path) -> tuple[Policy, dict[str, Any]]:
        with np.load(path) as z:
            hidden, num_actions = int(z["hidden"]), int(z["num_actions"])
            policy = cls(int(z["obs_dim"]), num_actions, hidden, np.random.default_rng(0))
            policy.w1, policy.b1 = z["w1"].astype(np.float32), z["b1"].astype(np.float32)
            rows = z["rows"]
            policy.w2[rows], policy.b2[rows] = z["w2"], z["b2"]
            policy.touched[rows] = True
            return policy, json.loads(str(z["meta"]))


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max())
    out: np.ndarray = e / e.sum()
    return out


@dataclass
class Steps:
    """The learner's decisions of a batch: features, legal actions, choice and probabilities."""

    obs: list[np.ndarray] = field(default_factory=list)
    legal: list[np.ndarray] = field(default_factory=list)
    chosen: list[int] = field(default_factory=list)  # index into legal
    probs: list[np.ndarray] = field(default_factory=list)
    advantage: list[float] = field(default_factory=list)


def play(
    env: Any, seed: int, learner: str | None, policy: Policy | None, rng: np.random.Generator,
    greedy: bool, steps: Steps | None = None,
) -> dict[str, float]:
    """One episode; the learner agent (None: nobody) plays `policy`, the others uniformly over
    the mask. Returns every agent's summed reward; the learner's decisions go to `steps`."""
    env.reset(seed=seed)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    first = len(steps.obs) if steps is not None else 0
    for agent in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        if agent == learner and policy is not None:
            o = obs["observation"].astype(np.float32, copy=False)
            h = policy.features(o)
            z = policy.logits(h, legal)
            if greedy:
                k = int(np.argmax(z))
            else:
                p = softmax(z)
                k = int(rng.choice(len(legal), p=p))
                if steps is not None:
                    steps.obs.append(o)
                    steps.legal.append(legal)
                    steps.chosen.append(k)
                    steps.probs.append(p)
            action = int(legal[k])
        else:
            action = int(legal[rng.integers(len(legal))])
        env.step(action)
        for a, r in env.rewards.items():
            totals[a] += float(r)
    if steps is not None:
        steps.advantage.extend([math.nan] * (len(steps.obs) - first))
    return totals


class Adam:
    def __init__(self, params: list[np.ndarray], lr: float) -> None:
        self.lr, self.t = lr, 0
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]

    def step(self, params: list[np.ndarray], grads: list[np.ndarray]) -> None:
        """Gradient ascent (the grads are of the objective)."""
        self.t += 1
        b1, b2 = 0.9, 0.999
        for p, g, m, v in zip(params, grads, self.m, self.v, strict=True):
            m *= b1
            m += (1 - b1) * g
            v *= b2
            v += (1 - b2) * g * g
            mhat = m / (1 - b1**self.t)
            vhat = v / (1 - b2**self.t)
            p += self.lr * mhat / (np.sqrt(vhat) + 1e-8)


def gradients(policy: Policy, steps: Steps, entropy: float) -> list[np.ndarray]:
    """d/dparams of sum(advantage * log p(chosen)) + entropy bonus, over the batch."""
    gw1, gb1 = np.zeros_like(policy.w1), np.zeros_like(policy.b1)
    gw2, gb2 = np.zeros_like(policy.w2), np.zeros_like(policy.b2)
    n = len(steps.obs)
    if not n:
        return [gw1, gb1, gw2, gb2]
    obs = np.stack(steps.obs)
    hs = np.tanh(obs @ policy.w1.T + policy.b1) if policy.hidden else obs
    rows: list[np.ndarray] = []
    gz_all: list[np.ndarray] = []
    dh = np.zeros_like(hs) if policy.hidden else None
    for i in range(n):
        legal, p = steps.legal[i], steps.probs[i]
        gz = -p * steps.advantage[i]
        gz[steps.chosen[i]] += steps.advantage[i]
        if entropy:
            logp = np.log(p + 1e-12)
            gz -= entropy * p * (logp + (p * -logp).sum())  # d(entropy)/dz = -p (log p + H)
        rows.append(legal)
        gz_all.append(gz)
        if dh is not None:
            dh[i] = gz @ policy.w2[legal]
    idx = np.concatenate(rows)
    gz_flat = np.concatenate(gz_all)
    owner = np.repeat(np.arange(n), [len(r) for r in rows])
    np.add.at(gw2, idx, gz_flat[:, None] * hs[owner])
    np.add.at(gb2, idx, gz_flat)
    policy.touched[idx] = True
    if dh is not None:
        dpre = dh * (1 - hs * hs)
        gw1 += dpre.T @ obs
        gb1 += dpre.sum(0)
    return [gw1 / n, gb1 / n, gw2 / n, gb2 / n]


def make_env(game: str, players: int, options: Mapping[str, Any]) -> Any:
    from engines.envs.aec import env

    return env(game, players=players, options=dict(options))


def train(
    game: str, players: int, options: Mapping[str, Any], episodes: int, hidden: int, lr: float,
    batch: int, entropy: float, seed: int, log_every: int = 500,
) -> Policy:
    env = make_env(game, players, options)
    agents = list(env.possible_agents)
    first = agents[0]
    space = env.observation_space(first)["observation"]
    num_actions = int(env.action_space(first).n)
    rng = np.random.default_rng(seed)
    policy = Policy(int(np.prod(space.shape)), num_actions, hidden, rng)
    opt = Adam(policy.params(), lr)
    mean, var = 0.0, 1.0
    recent: list[float] = []
    steps = Steps()
    started = time.process_time()
    for ep in range(episodes):
        learner = agents[ep % players]
        before = len(steps.obs)
        totals = play(env, seed * 1_000_003 + ep, learner, policy, rng, greedy=False, steps=steps)
        g = totals[learner]
        recent.append(g)
        adv = (g - mean) / math.sqrt(var + 1e-6)
        for i in range(before, len(steps.obs)):
            steps.advantage[i] = adv
        mean += 0.02 * (g - mean)
        var += 0.02 * ((g - mean) ** 2 - var)
        if (ep + 1) % batch == 0:
            opt.step(policy.params(), gradients(policy, steps, entropy))
            steps = Steps()
        if log_every and (ep + 1) % log_every == 0:
            window = recent[-log_every:]
            print(
                f"episode {ep + 1}: learner's mean points {np.mean(window):.2f} over the last "
                f"{len(window)}, cpu {time.process_time() - started:.0f}s", flush=True,
            )
    return policy


def interval(xs: np.ndarray) -> tuple[float, float]:
    """Mean and the half width of its 95% normal interval."""
    return float(xs.mean()), float(1.96 * xs.std(ddof=1) / math.sqrt(len(xs)))


def wilson(wins: int, n: int) -> tuple[float, float, float]:
    z = 1.96
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return p, centre - half, centre + half


def evaluate(
    game: str, players: int, options: Mapping[str, Any], policy: Policy, deals: int, seed: int
) -> dict[str, Any]:
    """The greedy policy in one seat (rotated) against random, beside random in that seat."""
    env = make_env(game, players, options)
    agents = list(env.possible_agents)
    rng = np.random.default_rng(seed)
    trained, baseline, wins, base_wins = [], [], 0, 0
    for d in range(deals):
        learner = agents[d % players]
        deal_seed = 7_000_000_007 + seed * 100_003 + d
        t = play(env, deal_seed, learner, policy, rng, greedy=True)
        b = play(env, deal_seed, None, None, rng, greedy=True)
        trained.append(t[learner])
        baseline.append(b[learner])
        wins += t[learner] > max(v for a, v in t.items() if a != learner)
        base_wins += b[learner] > max(v for a, v in b.items() if a != learner)
    tr, ba = np.array(trained), np.array(baseline)
    return {
        "deals": deals,
        "trained": interval(tr),
        "random": interval(ba),
        "difference": interval(tr - ba),
        "trained_wins": wilson(wins, deals),
        "random_wins": wilson(base_wins, deals),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="dos")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--option", type=option_argument, action="append", default=[],
                        help="NAME=VALUE game option (default: the env's one-deal match)")
    parser.add_argument("--episodes", type=int, default=3000)
    parser.add_argument("--hidden", type=int, default=16, help="tanh units (0: linear)")
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--batch", type=int, default=16, help="episodes per update")
    parser.add_argument("--entropy", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--eval-deals", type=int, default=2000)
    parser.add_argument("--out", type=Path, default=Path("examples/trained_bot_weights.npz"))
    args = parser.parse_args(argv)
    _, _, options = episode_setup(args.game, args.players, dict(args.option))
    cpu = time.process_time()
    policy = train(args.game, args.players, options, args.episodes, args.hidden, args.lr,
                   args.batch, args.entropy, args.seed)
    train_cpu = time.process_time() - cpu
    meta = {"game": args.game, "players": args.players, "options": options,
            "episodes": args.episodes, "seed": args.seed}
    policy.save(args.out, meta)
    print(f"trained {args.episodes} episodes in {train_cpu:.0f} CPU seconds; weights "
          f"{args.out} ({args.out.stat().st_size // 1024} KB, {int(policy.touched.sum())} of "
          f"{policy.num_actions} action rows)")
    if args.eval_deals:
        cpu = time.process_time()
        r = evaluate(args.game, args.players, options, policy, args.eval_deals, args.seed + 1)
        m, h = r["trained"]
        print(f"evaluation over {r['deals']} deals (seats rotated), points per deal, 95% interval:")
        print(f"  trained vs random: {m:.2f} ± {h:.2f}")
        m, h = r["random"]
        print(f"  random vs random (same seat, same deals): {m:.2f} ± {h:.2f}")
        m, h = r["difference"]
        print(f"  paired difference: {m:+.2f} ± {h:.2f}")
        for name in ("trained_wins", "random_wins"):
            p, lo, hi = r[name]
            print(f"  {name.replace('_', ' ')}: {p:.1%} [{lo:.1%}, {hi:.1%}]")
        print(f"evaluation CPU {time.process_time() - cpu:.0f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
