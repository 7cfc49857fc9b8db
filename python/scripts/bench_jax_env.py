#!/usr/bin/env python
"""Benchmark the JAX engine: env steps/s under a random valid-action policy, plus compile times.

Each measured call runs `--steps` vmapped steps inside one jitted lax.scan;
finished envs are reset in the loop with `reset_where`, which generates new
games only for the envs that finished. Prints a table and writes
JSON (default bench_results/bench_jax_env.json).
"""

import argparse
import json
import os
import platform
import sys
import time

import jax
import jax.numpy as jnp

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import hackmatrix.jax_env as J  # noqa: E402


def random_valid_actions(key, masks):
    """A uniformly random valid action per env (action 0 where none is valid).

    One integer draw per env picks the k-th valid action: cheaper than a
    categorical over 28 masked logits, which draws and logs 28 numbers per env.
    """
    count = jnp.sum(masks, axis=-1)
    k = jax.random.randint(key, count.shape, 0, jnp.maximum(count, 1))
    rank = jnp.cumsum(masks, axis=-1) - 1
    return jnp.argmax(masks & (rank == k[:, None]), axis=-1).astype(jnp.int32)


def make_rollout(num_envs, steps):
    """A jitted function (key, obs, states) -> (obs, states, key, finished episodes) running `steps` steps.

    The observations are carried and returned, as a training rollout keeps
    them: a benchmark that dropped them would let XLA skip computing the
    observation altogether and report a step that no trainer can use.
    """
    v_step = jax.vmap(J.step, in_axes=(None, 0, 0))
    v_mask = jax.vmap(J.action_mask)

    def one(carry, _):
        obs, states, key = carry
        key, k_act, k_reset = jax.random.split(key, 3)
        actions = random_valid_actions(k_act, v_mask(states))
        obs, states, _, done, _ = v_step(None, states, actions)
        obs, states = J.reset_where(k_reset, done, obs, states)
        return (obs, states, key), jnp.sum(done)

    @jax.jit
    def rollout(key, obs, states):
        (obs, states, key), dones = jax.lax.scan(one, (obs, states, key), None, length=steps)
        return obs, states, key, jnp.sum(dones)

    return rollout


def bench(num_envs, steps, repeats):
    key = jax.random.PRNGKey(0)
    t0 = time.perf_counter()
    obs, states = jax.jit(jax.vmap(J.reset))(jax.random.split(key, num_envs))
    jax.block_until_ready(states)
    reset_compile = time.perf_counter() - t0
    rollout = make_rollout(num_envs, steps)
    t0 = time.perf_counter()
    compiled = rollout.lower(key, obs, states).compile()
    compile_s = time.perf_counter() - t0
    obs, states, key, _ = compiled(key, obs, states)  # warm-up
    jax.block_until_ready(states)
    best = float("inf")
    episodes = 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        obs, states, key, done = compiled(key, obs, states)
        jax.block_until_ready((obs, states))
        best = min(best, time.perf_counter() - t0)
        episodes += int(done)
    return {"num_envs": num_envs, "steps_per_call": steps, "seconds_per_call": best,
            "steps_per_second": num_envs * steps / best, "rollout_compile_s": compile_s,
            "reset_compile_s": reset_compile, "episodes_finished": episodes}


def step_compile_time():
    """Compile time of the vmapped step alone (batch 64)."""
    _, states = jax.jit(jax.vmap(J.reset))(jax.random.split(jax.random.PRNGKey(1), 64))
    v_step = jax.jit(jax.vmap(J.step, in_axes=(None, 0, 0)))
    t0 = time.perf_counter()
    v_step.lower(None, states, jnp.zeros(64, jnp.int32)).compile()
    return time.perf_counter() - t0


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--num-envs", type=int, nargs="+", default=[1, 64, 1024, 4096, 16384])
    parser.add_argument("--steps", type=int, default=32, help="steps per measured call")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", default="bench_results/bench_jax_env.json")
    args = parser.parse_args()

    results = {"device": str(jax.devices()[0]), "platform": platform.platform(), "cpu_count": os.cpu_count(),
               "vmapped_step_compile_s": step_compile_time(), "runs": []}
    print(f"vmapped step compile: {results['vmapped_step_compile_s']:.1f} s")
    print(f"{'num_envs':>9} {'steps/s':>12} {'s/call':>9} {'compile s':>10} {'episodes':>9}")
    for n in args.num_envs:
        r = bench(n, args.steps, args.repeats)
        results["runs"].append(r)
        print(f"{n:>9} {r['steps_per_second']:>12.0f} {r['seconds_per_call']:>9.3f} "
              f"{r['rollout_compile_s']:>10.1f} {r['episodes_finished']:>9}", flush=True)
    best = max(results["runs"], key=lambda r: r["steps_per_second"])
    results["best"] = {"num_envs": best["num_envs"], "steps_per_second": best["steps_per_second"]}
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)
    print(f"best: {best['steps_per_second']:.0f} steps/s at num_envs={best['num_envs']}; wrote {args.out}")


if __name__ == "__main__":
    main()
