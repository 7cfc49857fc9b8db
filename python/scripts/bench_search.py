#!/usr/bin/env python
"""Benchmark the play-time search (specs/search.md): moves per second by simulations.

A batch of `--games` games is played from the canonical start: every move is
one search per game (the fair sampler's `--roots` roots, each with N
simulations over `--worlds` sampled states, each valued after `--leaf-rollout`
greedy steps, hackmatrix.search) followed by
the env step, `--moves` moves in one jitted `lax.scan`. moves/s = games x moves
/ seconds of the measured call (the best of `--repeats`, after a first call that
compiles). The network is train.sh's default (grid, 256 hidden, 2 layers)
freshly initialised, or `--params` (the cost does not depend on the weights). Prints a table and
writes JSON (default bench_results/bench_search.json).

Run it as the README runs the others, with XLA's optimizations on (the
default; the test suite turns them off with JAX_DISABLE_MOST_OPTIMIZATIONS=1).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

from hackmatrix.purejaxrl.config import non_negative_int  # argparse's type (light: no jax)


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--simulations", type=positive_int, nargs="+", default=[1, 8, 16, 64])
    p.add_argument("--games", type=positive_int, default=64, help="games searched at once")
    p.add_argument("--moves", type=positive_int, default=8, help="moves per measured call")
    p.add_argument("--roots", type=positive_int, default=1, help="sampled roots per decision")
    p.add_argument(
        "--worlds", type=positive_int, default=1, help="sampled states in each root's tree"
    )
    p.add_argument(
        "--leaf-rollout",
        type=non_negative_int,
        default=0,
        help="greedy steps from each valued node before its value is read (§3.6; default 0)",
    )
    p.add_argument("--considered", type=positive_int, default=16, help="max considered actions")
    p.add_argument("--repeats", type=positive_int, default=2)
    p.add_argument("--params", type=Path, default=None, help="a params .npz / checkpoint")
    p.add_argument("--out", default="bench_results/bench_search.json")
    return p.parse_args(argv)


def make_play(network, config, games: int, moves: int):
    """`play(key, states, params) -> (states, (done, action))`: `moves` moves of `games`
    games in one jitted scan, each move one search per game (the public `search`, as the
    play tools call it) and the env step."""
    import jax

    from hackmatrix import jax_env
    from hackmatrix.search.search import search

    @jax.jit
    def play(key, states, params):
        def move(states, k):
            keys = jax.random.split(k, games)
            out = search(params, keys, states, network=network, config=config)
            _, states, _, done, _ = jax.vmap(jax_env.step)(keys, states, out.action)
            return states, (done, out.action)

        return jax.lax.scan(move, states, jax.random.split(key, moves))

    return play


def main(argv=None) -> int:
    args = parse_args(argv)
    import jax
    import jax.numpy as jnp

    from hackmatrix import jax_env
    from hackmatrix.purejaxrl.network import make_network
    from hackmatrix.search.search import SearchConfig

    if args.params is not None:
        from hackmatrix.purejaxrl.checkpoint import load_policy

        policy = load_policy(args.params)
        network, params = policy.network, policy.params
    else:
        network = make_network(256, 2, network="grid")
        params = network.init(jax.random.PRNGKey(0), jnp.zeros((1, jax_env.env.OBS_SIZE)))

    _, states = jax.jit(jax.vmap(jax_env.reset))(
        jax.random.split(jax.random.PRNGKey(1), args.games)
    )
    rows = []
    size = sum(x.size for x in jax.tree_util.tree_leaves(params))
    print(
        f"{jax.devices()[0].device_kind} ({platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores), {args.games} games, {args.roots} root(s), "
        f"{args.worlds} world(s) a tree, leaf rollout {args.leaf_rollout}, "
        f"{args.moves} moves per call, {size:,} network parameters"
    )
    print(f"{'simulations':>11} {'moves/s':>9} {'ms/move (batch)':>16} {'compile s':>10}")
    for sims in args.simulations:
        config = SearchConfig(
            num_simulations=sims,
            max_num_considered_actions=args.considered,
            num_roots=args.roots,
            worlds=args.worlds,
            leaf_rollout=args.leaf_rollout,
        )
        play = make_play(network, config, args.games, args.moves)
        t0 = time.perf_counter()
        jax.block_until_ready(play(jax.random.PRNGKey(2), states, params))
        compile_s = time.perf_counter() - t0
        best = float("inf")
        for r in range(args.repeats):
            t0 = time.perf_counter()
            jax.block_until_ready(play(jax.random.PRNGKey(3 + r), states, params))
            best = min(best, time.perf_counter() - t0)
        moves_per_s = args.games * args.moves / best
        rows.append(
            {
                "simulations": sims,
                "moves_per_s": moves_per_s,
                "ms_per_batch_move": 1000 * best / args.moves,
                "compile_s": compile_s,
            }
        )
        print(
            f"{sims:>11} {moves_per_s:>9.1f} {1000 * best / args.moves:>16.1f} {compile_s:>10.1f}"
        )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "device": jax.devices()[0].device_kind,
                "cpu_count": os.cpu_count(),
                "games": args.games,
                "roots": args.roots,
                "worlds": args.worlds,
                "leaf_rollout": args.leaf_rollout,
                "moves": args.moves,
                "considered": args.considered,
                "rows": rows,
            },
            indent=2,
        )
    )
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
