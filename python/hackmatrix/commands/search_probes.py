"""Diagnostics of the play-time search that are not players (specs/experiments/50, 51).

`unfair-root EVALUATE-ARGS...`: `hackmatrix-evaluate` with every search started from the
*true* state, only the seed redrawn (`SearchConfig(root="reseed")`). It sees the hidden
board, so it is never a player: it is the yardstick of what fairness costs (§50 part C).

`siphon-labels`: plays games greedy with a network and, at every state where SIPHON is
legal, asks the fair search for its move (as the play tools choose it): how often the
search siphons where the network does, and where it does not (§51's diagnostic of why
learning from the search stops siphoning).
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


def parse_label_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=f"search_probes.py {LABELS}", description=__doc__)
    parser.add_argument("policy", nargs="?", default="pretrained", help="a run, checkpoint or .npz")
    parser.add_argument("--games", type=int, default=64, help="games 0..G-1 (default 64)")
    parser.add_argument("--steps", type=int, default=200, help="moves per game at most (200)")
    parser.add_argument("--simulations", type=int, default=16, help="the search's (default 16)")
    parser.add_argument("--search-tree-reward", choices=SEARCH_TREE_REWARDS, default="env")
    parser.add_argument("--key", type=int, default=7, help="the search's key (default 7)")
    args = parser.parse_args(argv)
    for name in ("games", "steps", "simulations"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1, got {getattr(args, name)}")
    return args


def tally(network_siphons, search_siphons) -> dict[str, float]:
    """Shares over the states with SIPHON legal (booleans, one per state)."""
    import numpy as np

    net = np.asarray(network_siphons, bool)
    searched = np.asarray(search_siphons, bool)

    def share(x) -> float:
        return float(x.mean()) if x.size else float("nan")

    return {
        "states": int(net.size),
        "network_siphons": share(net),
        "search_siphons": share(searched),
        "search_agrees_where_network_siphons": share(searched[net]),
        "search_siphons_where_network_does_not": share(searched[~net]),
    }


def siphon_labels(args: argparse.Namespace) -> dict[str, float]:
    import jax
    import jax.numpy as jnp
    import numpy as np

    from hackmatrix import jax_env
    from hackmatrix.jax_env.constants import SIPHON_ACTION
    from hackmatrix.pretrained import PRETRAINED_NAME, pretrained_params
    from hackmatrix.purejaxrl import distribution
    from hackmatrix.purejaxrl.checkpoint import load_policy
    from hackmatrix.search.search import Searcher, config_for_policy

    path = pretrained_params() if args.policy == PRETRAINED_NAME else Path(args.policy)
    policy = load_policy(path)
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


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in (UNFAIR, LABELS):
        print(f"usage: search_probes.py {{{UNFAIR},{LABELS}}} ...\n\n{__doc__}", file=sys.stderr)
        return 2
    if argv[0] == UNFAIR:
        return run_unfair_evaluation(argv[1:])
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
