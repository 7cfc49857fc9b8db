"""Diagnostics of the play-time search that are not players (specs/experiments/50-52).

`unfair-root EVALUATE-ARGS...`: `hackmatrix-evaluate` with every search started from the
*true* state, only the seed redrawn (`SearchConfig(root="reseed")`). It sees the hidden
board, so it is never a player: it is the yardstick of what fairness costs (§50 part C).

`siphon-labels`: plays games greedy with a network and, at every state where SIPHON is
legal, asks the fair search for its move (as the play tools choose it): how often the
search siphons where the network does, and where it does not (§51's diagnostic of why
learning from the search stops siphoning).

`q-gaps`: plays games greedy with a network and, at every state where the fair search's
move differs from the network's, records the search's Q-gap (its move's Q minus the
network's move's) and then tests the search's move on the true game: from that state one
branch plays the search's move and the other the network's, and both continue greedy with
the network to the end (or a horizon). The paired difference of their final stages, by
Q-gap threshold, says whether the search's confident disagreements are right (§52, the
gate `--search-min-q-gap`). The branches read the true state (seed and hidden board): a
measurement of the labels, never a player.

`value-calibration`: plays games with a network (greedy or sampled) and sets its value
V(s) at every state beside the discounted return the game then paid, per stage: in the
reward the run trained on (the one its value learned) and in the game's own reward (the
one the search's tree adds by default). The bias, error and explained variance say on
which stages a leaf's value can be trusted (`analysis/value_calibration.py`).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from hackmatrix.purejaxrl.config import SEARCH_TREE_REWARDS

UNFAIR = "unfair-root"
LABELS = "siphon-labels"
GAPS = "q-gaps"
SHAPE = "prior-shape"
VALUE = "value-calibration"
PROBES = (UNFAIR, LABELS, GAPS, SHAPE, VALUE)
GAP_THRESHOLDS = (0.0, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0)
BRANCH_BATCH = 256  # states per compiled branch rollout


@contextlib.contextmanager
def unfair_search_roots() -> Iterator[None]:
    """Inside: every search hackmatrix-evaluate builds starts from the reseeded true state."""
    from hackmatrix.commands import evaluate

    fair = evaluate.search_options
    evaluate.search_options = lambda args: {**fair(args), "root": "reseed"}
    try:
        yield
    finally:
        evaluate.search_options = fair


def run_unfair_evaluation(argv: Sequence[str]) -> int:
    from hackmatrix.commands import evaluate

    if "--search" not in argv:
        print(f"{UNFAIR}: give --search N (it changes only the search's root)", file=sys.stderr)
        return 2
    with unfair_search_roots():
        return evaluate.main(list(argv))


def parse_label_args(argv: Sequence[str], probe: str = LABELS) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=f"search_probes.py {probe}", description=__doc__)
    parser.add_argument("policy", nargs="?", default="pretrained", help="a run, checkpoint or .npz")
    parser.add_argument("--games", type=int, default=64, help="games 0..G-1 (default 64)")
    parser.add_argument("--steps", type=int, default=200, help="moves per game at most (200)")
    parser.add_argument("--simulations", type=int, default=16, help="the search's (default 16)")
    parser.add_argument("--search-tree-reward", choices=SEARCH_TREE_REWARDS, default="env")
    parser.add_argument("--key", type=int, default=7, help="the search's key (default 7)")
    if probe == GAPS:
        parser.add_argument(
            "--horizon", type=int, default=600, help="moves each branch plays at most (600)"
        )
    args = parser.parse_args(argv)
    for name in ("games", "steps", "simulations", "horizon"):
        if not hasattr(args, name):
            continue
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1, got {getattr(args, name)}")
    return args


def parse_shape_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=f"search_probes.py {SHAPE}", description=__doc__)
    parser.add_argument("policies", nargs="+", help="runs' checkpoints, .npz or 'pretrained'")
    parser.add_argument("--games", type=int, default=64, help="games 0..G-1 (default 64)")
    parser.add_argument("--steps", type=int, default=300, help="moves per game at most (300)")
    parser.add_argument("--simulations", type=int, default=16, help="for the reach (16)")
    parser.add_argument("--c-scale", type=float, default=0.1, help="for the reach (0.1)")
    args = parser.parse_args(argv)
    for name in ("games", "steps", "simulations"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1, got {getattr(args, name)}")
    if args.c_scale <= 0:
        parser.error(f"--c-scale must be > 0, got {args.c_scale}")
    return args


def load_named_policy(text: str):
    """The policy a probe names: 'pretrained' (the shipped one), a run, checkpoint or .npz."""
    from hackmatrix.pretrained import PRETRAINED_NAME, pretrained_params
    from hackmatrix.purejaxrl.checkpoint import load_policy

    return load_policy(pretrained_params() if text == PRETRAINED_NAME else Path(text))


def parse_value_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=f"search_probes.py {VALUE}", description=__doc__)
    parser.add_argument("policy", nargs="?", default="pretrained", help="a run, checkpoint or .npz")
    parser.add_argument("--games", type=int, default=128, help="games 0..G-1 (default 128)")
    parser.add_argument("--steps", type=int, default=1000, help="moves per game at most (1000)")
    parser.add_argument("--policy-mode", choices=("greedy", "sample"), default="greedy")
    parser.add_argument("--key", type=int, default=0, help="the sampled policy's key (default 0)")
    parser.add_argument("--json", type=Path, help="also write the rows to this file")
    args = parser.parse_args(argv)
    for name in ("games", "steps"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1, got {getattr(args, name)}")
    return args


def play_for_values(args: argparse.Namespace) -> dict:
    """Plays games 0..games-1 with the policy; per step (time-major [T, B]) its value V(s)
    in return units, the game's reward, the trained reward, the stage, done and live;
    and the run's gamma."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from hackmatrix import jax_env
    from hackmatrix.analysis.choosers import sample_actions
    from hackmatrix.analysis.play import GameKeys
    from hackmatrix.purejaxrl import distribution, shaping
    from hackmatrix.purejaxrl.value_target import make_value_scale
    from hackmatrix.search.search import tree_reward_for_run

    policy = load_named_policy(args.policy)
    network, params, stored = policy.network, policy.params, policy.config
    scale = make_value_scale(stored.get("value_target") or "raw")
    tree = tree_reward_for_run(stored)  # None: the run trained on the game's own reward
    step = jax.vmap(jax_env.step, in_axes=(None, 0, 0))
    sampled = args.policy_mode == "sample"

    game_keys = GameKeys.of(jax.random.PRNGKey(args.key), jnp.arange(args.games))

    @jax.jit
    def advance(t, obs, states, carries):
        mask = jax.vmap(jax_env.action_mask)(states)
        logits, head = network.apply(params, obs)
        if sampled:  # each game's action keys as the behaviour evaluation draws them
            action = sample_actions(game_keys.next(t, args.games)[1], logits, mask)
        else:
            action = distribution.greedy(logits, mask)
        next_obs, next_states, reward, done, info = step(jax.random.PRNGKey(0), states, action)
        trained = reward
        if tree is not None:  # the reward the trainer computed from this very step
            components = jnp.stack([info["reward_components"][n] for n in tree.reward_names], -1)
            facts = shaping.StepFacts(action, reward, components, done, info)
            trained, _, carries = shaping.shape(
                tree.shapers, facts, carries, tree.constant_levers()
            )
        record = (scale.to_value(head), reward, trained, states.stage, done, info["won"])
        return next_obs, next_states, carries, record

    obs, states = jax.vmap(jax_env.reset_from_seed)(jnp.arange(args.games, dtype=jnp.uint32))
    carries = tree.init_carries(args.games) if tree is not None else {}
    alive = np.ones(args.games, bool)
    rows: list = []
    for t in range(args.steps):
        obs, states, carries, record = advance(jnp.int32(t), obs, states, carries)
        value, reward, trained, stage, done, won = (np.asarray(x) for x in record)
        rows.append((value, reward, trained, stage, done, won & alive, alive.copy()))
        alive &= ~done
        if not alive.any():
            break
    value, reward, trained, stage, done, won, live = (np.stack(column) for column in zip(*rows))
    return {
        "value": value,
        "reward": reward,
        "trained": trained,
        "stage": stage,
        "done": done,
        "live": live,
        "won_games": int(won.any(axis=0).sum()),
        "gamma": float(stored.get("gamma", 0.99)),
        "trained_is_env": tree is None,
    }


def value_calibration(args: argparse.Namespace) -> dict:
    """The probe's rows: per reward (`trained`, and `env` unless the run trained on it),
    one row per stage and one for all (analysis/value_calibration.py)."""
    from hackmatrix.analysis.value_calibration import (
        calibration_rows,
        discounted_returns,
        finished_games,
    )

    played = play_for_values(args)
    rewards = {"trained": played["trained"]}
    if not played["trained_is_env"]:
        rewards["env"] = played["reward"]
    done, live, gamma = played["done"], played["live"], played["gamma"]
    returns = {name: discounted_returns(r, done, live, gamma)[0] for name, r in rewards.items()}
    finished = finished_games(done, live)  # the games whose every return is known
    keep = live & finished[None, :]
    tables = {
        name: calibration_rows(played["value"], g, played["stage"], keep)
        for name, g in returns.items()
    }
    return {
        "policy": args.policy,
        "policy_mode": args.policy_mode,
        "games": args.games,
        "finished_games": int(finished.sum()),
        "won_games": played["won_games"],
        "gamma": played["gamma"],
        "tables": tables,
    }


def print_value_calibration(args: argparse.Namespace) -> int:
    import json

    found = value_calibration(args)
    print(
        f"value against the discounted return (gamma {found['gamma']:g}) on the states "
        f"{args.policy} visits playing {args.policy_mode} ({found['finished_games']} of "
        f"{args.games} games finished within {args.steps} moves, {found['won_games']} won; cut "
        f"games left out; a win pays hundreds, so one won game can dominate a stage's error)"
    )
    for name, rows in found["tables"].items():
        what = "trained reward" if name == "trained" else "game's own reward"
        print(f"  return in the {what}:")
        print("    stage    steps    value   return     bias     rmse  explained")
        for row in rows:
            stage = "all" if row["stage"] == 0 else str(row["stage"])
            if row["steps"] == 0:
                print(f"    {stage:>5} {0:8d}   (no state of a finished game on this stage)")
                continue
            print(
                f"    {stage:>5} {row['steps']:8d} {row['value']:8.2f} {row['return']:8.2f} "
                f"{row['bias']:+8.2f} {row['rmse']:8.2f} {row['explained']:10.3f}"
            )
    if args.json is not None:
        args.json.write_text(json.dumps(found, indent=1) + "\n")
        print(f"wrote {args.json}")
    return 0


def search_reach(simulations: int, c_scale: float) -> float:
    """The most the search's sigma(q) can separate two actions: q is rescaled to [0, 1] and
    multiplied by (50 + max visits) x c_scale, and no action has more visits than there are
    simulations. A logit gap beyond it is a move the search cannot change."""
    return (50 + simulations) * c_scale


def prior_shape(logits, mask, siphon_legal, reach: float) -> dict[str, float]:
    """Each number over the states (rows) with two or more legal actions; the SIPHON
    probability over the rows where SIPHON is legal."""
    import numpy as np

    logits = np.asarray(logits, np.float64)
    mask = np.asarray(mask, bool)
    siphon_legal = np.asarray(siphon_legal, bool)
    rows = mask.sum(-1) >= 2
    masked = np.where(mask, logits, -np.inf)[rows]
    probs = np.exp(masked - masked.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    entropy = -np.sum(np.where(probs > 0, probs * np.log(np.where(probs > 0, probs, 1)), 0), -1)
    top2 = -np.sort(-masked, axis=-1)[:, :2]
    gap = top2[:, 0] - top2[:, 1]
    from hackmatrix.jax_env.constants import SIPHON_ACTION

    siphon = probs[:, SIPHON_ACTION][siphon_legal[rows]]
    return {
        "states": int(rows.sum()),
        "entropy": _share(entropy),
        "top_probability": _share(probs.max(-1)),
        "logit_gap_median": float(np.median(gap)) if gap.size else float("nan"),
        "beyond_reach": _share(gap > reach),
        "siphon_states": int(siphon.size),
        "siphon_probability": _share(siphon),
    }


def read_prior_shapes(args: argparse.Namespace) -> list[dict]:
    """Plays games 0..games-1 greedy with the first policy; every policy's prior on them."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from hackmatrix import jax_env
    from hackmatrix.jax_env.constants import SIPHON_ACTION
    from hackmatrix.purejaxrl import distribution

    policies = [load_named_policy(text) for text in args.policies]  # the first one plays
    step = jax.vmap(jax_env.step, in_axes=(None, 0, 0))

    @jax.jit
    def play(obs, states):
        mask = jax.vmap(jax_env.action_mask)(states)
        logits = [policy.network.apply(policy.params, obs)[0] for policy in policies]
        action = distribution.greedy(logits[0], mask)
        next_obs, next_states, _, done, _ = step(jax.random.PRNGKey(0), states, action)
        return mask, logits, next_obs, next_states, done

    obs, states = jax.vmap(jax_env.reset_from_seed)(jnp.arange(args.games, dtype=jnp.uint32))
    alive = np.ones(args.games, bool)
    masks: list = []
    logits: list[list] = [[] for _ in policies]
    for _ in range(args.steps):
        mask, each, obs, states, done = play(obs, states)
        masks.append(np.asarray(mask)[alive])
        for kept, one in zip(logits, each):
            kept.append(np.asarray(one)[alive])
        alive &= ~np.asarray(done)
        if not alive.any():
            break
    mask = np.concatenate(masks)
    reach = search_reach(args.simulations, args.c_scale)
    return [
        {"policy": text, **prior_shape(np.concatenate(kept), mask, mask[:, SIPHON_ACTION], reach)}
        for text, kept in zip(args.policies, logits)
    ]


def print_prior_shapes(args: argparse.Namespace) -> int:
    rows = read_prior_shapes(args)
    reach = search_reach(args.simulations, args.c_scale)
    print(
        f"priors on the states the first policy visits greedy ({args.games} games, at most "
        f"{args.steps} moves, {rows[0]['states']} states with 2+ legal actions); the search's "
        f"reach at {args.simulations} simulations, c_scale {args.c_scale:g}: {reach:.2f} logits"
    )
    print("  entropy  top prob  median gap  gap > reach  P(SIPHON | legal)  policy")
    for row in rows:
        print(
            f"  {row['entropy']:7.3f}  {row['top_probability']:8.3f}  "
            f"{row['logit_gap_median']:10.2f}  {row['beyond_reach']:11.3f}  "
            f"{row['siphon_probability']:17.3f}  {row['policy']}"
        )
    return 0


def _share(x) -> float:
    """The share of true values (NaN for none)."""
    return float(x.mean()) if x.size else float("nan")


def tally(network_siphons, search_siphons) -> dict[str, float]:
    """Shares over the states with SIPHON legal (booleans, one per state)."""
    import numpy as np

    net = np.asarray(network_siphons, bool)
    searched = np.asarray(search_siphons, bool)
    return {
        "states": int(net.size),
        "network_siphons": _share(net),
        "search_siphons": _share(searched),
        "search_agrees_where_network_siphons": _share(searched[net]),
        "search_siphons_where_network_does_not": _share(searched[~net]),
    }


def _greedy_games(args: argparse.Namespace):
    """The policy's network and parameters, the fair searcher, a jitted greedy step and the
    starts of games 0..games-1."""
    import jax
    import jax.numpy as jnp

    from hackmatrix import jax_env
    from hackmatrix.purejaxrl import distribution
    from hackmatrix.search.search import Searcher, config_for_policy

    policy = load_named_policy(args.policy)
    network, params = policy.network, policy.params
    config = config_for_policy(
        policy.config, num_simulations=args.simulations, tree_reward=args.search_tree_reward
    )
    searcher = Searcher(network, config)
    obs, states = jax.vmap(jax_env.reset_from_seed)(jnp.arange(args.games, dtype=jnp.uint32))

    @jax.jit
    def greedy_step(obs, states):
        mask = jax.vmap(jax_env.action_mask)(states)
        logits, _ = network.apply(params, obs)
        action = distribution.greedy(logits, mask)
        step = jax.vmap(jax_env.step, in_axes=(None, 0, 0))
        next_obs, next_states, _, done, _ = step(jax.random.PRNGKey(0), states, action)
        return mask, action, next_obs, next_states, done

    return network, params, searcher, greedy_step, obs, states


def siphon_labels(args: argparse.Namespace) -> dict[str, float]:
    import jax
    import numpy as np

    from hackmatrix.jax_env.constants import SIPHON_ACTION

    _, params, searcher, greedy_step, obs, states = _greedy_games(args)
    # The play tools' move: the greedy searched action (the legal argmax of the improved policy).
    searched_move = jax.jit(lambda key, states: searcher.choose(key, states, params))

    alive = np.ones(args.games, bool)
    key = jax.random.PRNGKey(args.key)
    network_siphons, search_siphons = [], []
    for _ in range(args.steps):
        mask, action, next_obs, next_states, done = greedy_step(obs, states)
        key, search_key = jax.random.split(key)
        choice = np.asarray(searched_move(search_key, states))
        legal = alive & np.asarray(mask)[:, SIPHON_ACTION]
        network_siphons += list(np.asarray(action)[legal] == SIPHON_ACTION)
        search_siphons += list(choice[legal] == SIPHON_ACTION)
        alive &= ~np.asarray(done)
        obs, states = next_obs, next_states
        if not alive.any():
            break
    return tally(network_siphons, search_siphons)


def gap_table(
    gaps, stage_gains, search_siphons, network_siphons, thresholds=GAP_THRESHOLDS
) -> list[dict]:
    """One row per threshold G over the disagreeing states with Q-gap >= G: how many, the
    shares whose search move and whose network move are SIPHON, the paired final-stage
    gain of playing the search's move (mean and standard error), and that gain at the
    states where the network's move is SIPHON (the search saying "not now")."""
    import numpy as np

    from hackmatrix.analysis.eval_stats import standard_error

    gaps = np.asarray(gaps, float)
    gains = np.asarray(stage_gains, float)
    siphons = np.asarray(search_siphons, bool)
    net_siphons = np.asarray(network_siphons, bool)

    def mean_se(x):
        se = standard_error(x)
        return _share(x), float("nan") if se is None else se

    rows = []
    for threshold in thresholds:
        kept = gaps >= threshold
        gain, gain_se = mean_se(gains[kept])
        not_now, not_now_se = mean_se(gains[kept & net_siphons])
        rows.append(
            {
                "min_gap": threshold,
                "states": int(kept.sum()),
                "search_siphons": _share(siphons[kept]),
                "network_siphons": _share(net_siphons[kept]),
                "stage_gain": gain,
                "stage_gain_se": gain_se,
                "not_now_states": int((kept & net_siphons).sum()),
                "not_now_gain": not_now,
                "not_now_gain_se": not_now_se,
            }
        )
    return rows


def _make_branch(network, params, horizon: int):
    """`final_stages(states, first_actions)`: each game plays its first action, then the
    network greedy until it ends or `horizon` moves have passed (an ended game stays)."""
    import jax
    import jax.numpy as jnp

    from hackmatrix import jax_env
    from hackmatrix.purejaxrl import distribution

    step = jax.vmap(jax_env.step, in_axes=(None, 0, 0))
    key = jax.random.PRNGKey(0)

    def move(carry, action):
        obs, states, alive = carry
        next_obs, next_states, _, done, _ = step(key, states, action)
        keep = jax.tree_util.tree_map(
            lambda new, old: jnp.where(alive.reshape((-1,) + (1,) * (new.ndim - 1)), new, old),
            (next_obs, next_states),
            (obs, states),
        )
        return (*keep, alive & ~done)

    @jax.jit
    def final_stages(obs, states, first_actions):
        carry = move((obs, states, jnp.ones(first_actions.shape, bool)), first_actions)

        def body(carry, _):
            obs, states, _ = carry
            logits, _ = network.apply(params, obs)
            action = distribution.greedy(logits, jax.vmap(jax_env.action_mask)(states))
            return move(carry, action), None

        (_, states, _), _ = jax.lax.scan(body, carry, None, length=horizon)
        return states.stage

    return final_stages


def _rows(tree, rows):
    """The given rows of every leaf (as host arrays)."""
    import jax
    import numpy as np

    return jax.tree_util.tree_map(lambda x: np.asarray(x)[rows], tree)


def q_gaps(args: argparse.Namespace) -> list[dict]:
    import jax
    import jax.numpy as jnp
    import numpy as np

    from hackmatrix.jax_env.constants import SIPHON_ACTION
    from hackmatrix.purejaxrl.expert_iteration import q_gap, searched_move

    network, params, searcher, greedy_step, obs, states = _greedy_games(args)

    @jax.jit
    def searched(key, states, mask, greedy):
        out = searcher.search(key, states, params)
        best = searched_move(out.weights, mask)
        return best, q_gap(out.q, best, greedy)

    alive = np.ones(args.games, bool)
    key = jax.random.PRNGKey(args.key)
    found: dict[str, list] = {"gap": [], "best": [], "greedy": [], "obs": [], "state": []}
    for _ in range(args.steps):
        mask, action, next_obs, next_states, done = greedy_step(obs, states)
        key, search_key = jax.random.split(key)
        best, gap = (np.asarray(x) for x in searched(search_key, states, mask, action))
        action = np.asarray(action)
        differ = alive & (best != action) & np.asarray(mask).any(-1)
        if differ.any():
            rows = np.flatnonzero(differ)
            found["gap"] += list(gap[rows])
            found["best"] += list(best[rows])
            found["greedy"] += list(action[rows])
            found["obs"].append(np.asarray(obs)[rows])
            found["state"].append(_rows(states, rows))
        alive &= ~np.asarray(done)
        obs, states = next_obs, next_states
        if not alive.any():
            break
    count = len(found["gap"])
    if count == 0:
        return gap_table([], [], [], [])
    search_moves, network_moves = np.array(found["best"]), np.array(found["greedy"])
    all_obs = np.concatenate(found["obs"])
    all_states = jax.tree_util.tree_map(lambda *x: np.concatenate(x), *found["state"])
    final_stages = _make_branch(network, params, args.horizon)
    gains = []
    for start in range(0, count, BRANCH_BATCH):
        rows = np.arange(start, start + BRANCH_BATCH) % count  # padded by repeats, then cut
        batch_obs = jnp.asarray(all_obs[rows])
        batch_states = _rows(all_states, rows)
        by_search = final_stages(batch_obs, batch_states, jnp.asarray(search_moves[rows]))
        by_network = final_stages(batch_obs, batch_states, jnp.asarray(network_moves[rows]))
        kept = min(BRANCH_BATCH, count - start)
        gains += list((np.asarray(by_search) - np.asarray(by_network))[:kept])
    return gap_table(
        found["gap"], gains, search_moves == SIPHON_ACTION, network_moves == SIPHON_ACTION
    )


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in PROBES:
        print(f"usage: search_probes.py {{{','.join(PROBES)}}} ...\n\n{__doc__}", file=sys.stderr)
        return 2
    if argv[0] == UNFAIR:
        return run_unfair_evaluation(argv[1:])
    if argv[0] == GAPS:
        return print_q_gaps(parse_label_args(argv[1:], GAPS))
    if argv[0] == SHAPE:
        return print_prior_shapes(parse_shape_args(argv[1:]))
    if argv[0] == VALUE:
        return print_value_calibration(parse_value_args(argv[1:]))
    args = parse_label_args(argv[1:])
    shares = siphon_labels(args)
    print(
        f"{shares['states']} states with SIPHON legal ({args.games} games, greedy network, "
        f"search {args.simulations} simulations, tree reward {args.search_tree_reward})"
    )
    for name, value in shares.items():
        if name != "states":
            print(f"  {name.replace('_', ' ')}: {value:.3f}")
    return 0


def print_q_gaps(args: argparse.Namespace) -> int:
    rows = q_gaps(args)
    print(
        f"states where the fair search's move differs from the greedy network's ({args.games} "
        f"games, {args.simulations} simulations, tree reward {args.search_tree_reward}); gain: "
        f"final stage playing the search's move minus the network's, then the network greedy "
        f"for {args.horizon} moves on the true game"
    )
    print(
        "  Q-gap >=   states   search SIPHON   stage gain (± se)   "
        "network SIPHON: states, gain of not siphoning (± se)"
    )
    for row in rows:
        print(
            f"  {row['min_gap']:8.2f} {row['states']:8d} {row['search_siphons']:15.3f}   "
            f"{row['stage_gain']:+.3f} ± {row['stage_gain_se']:.3f}   "
            f"{row['not_now_states']:8d}   "
            f"{row['not_now_gain']:+.3f} ± {row['not_now_gain_se']:.3f}"
        )
    return 0
