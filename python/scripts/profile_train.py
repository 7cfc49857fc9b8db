#!/usr/bin/env python3
"""Where one PPO update's time goes: each phase jitted and timed on its own.

Builds the trainer exactly as bench_train.py does (default network,
auto-scaled minibatches/epochs), runs one whole update to get a real
trajectory, then times every phase separately (median of --repeats, wall
and process CPU time, after a warm-up call) and prints XLA's cost analysis
(FLOPs, bytes accessed) for each. Writes bench_results/profile_train.json.

    JAX_PLATFORMS=cpu python python/scripts/profile_train.py            # 2,048 x 128

Phases (specs/performance.md, "Trainer profile"):
    rollout            the whole rollout scan (env + forward + sampling) and V(o_T)
      env step         vmapped step + auto-reset + mask, actions sampled from uniform logits
      sampling         Gumbel-max sample + log-prob on [envs, 28] logits, num_steps times
      forward          the network on one step's [envs, 1545] observations, num_steps calls
    gae                reverse scan over the trajectory
    learn              all epochs: shuffling, gathers, forward/backward, Adam
      shuffle+gather   the minibatch inputs of one epoch, taken in shuffled order
      fwd/bwd          gradients of every minibatch of one epoch (parameters fixed)
      optimizer        one epoch's Adam steps (gradients fixed)
    metrics            rollout_metrics and the loss means
    update             rollout + gae + learn + metrics in one jit (what a chunk runs)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path


def timed(fn, *args, repeats: int):
    """(median wall s, median process-CPU s, output) over `repeats` calls after one warm-up."""
    import jax

    out = jax.block_until_ready(fn(*args))
    walls, cpus = [], []
    for _ in range(repeats):
        del out
        wall, cpu = time.perf_counter(), time.process_time()
        out = jax.block_until_ready(fn(*args))
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus), out


def cost(jitted, *args) -> dict:
    """XLA's cost analysis of the compiled function: GFLOP and GB accessed."""
    analysis = jitted.lower(*args).compile().cost_analysis()
    if isinstance(analysis, list):  # older jax returns one dict per computation
        analysis = analysis[0] if analysis else {}
    analysis = analysis or {}
    return {
        "gflop": round(analysis.get("flops", 0.0) / 1e9, 2),
        "gb_accessed": round(analysis.get("bytes accessed", 0.0) / 1e9, 2),
    }


def env_and_config(args):
    """The game module and the auto-scaled config every mode profiles."""
    import importlib

    from hackmatrix.purejaxrl.config import TrainConfig, auto_scale_for_batch_size

    config = TrainConfig(
        num_envs=args.num_envs, num_steps=args.num_steps, log_interval=1, hidden_dim=args.hidden_dim
    )
    auto_scale_for_batch_size(config)
    return importlib.import_module(args.env_module), config


def profile(args) -> dict:
    import jax
    import jax.numpy as jnp

    from hackmatrix.purejaxrl import distribution
    from hackmatrix.purejaxrl.autoreset import make_auto_reset
    from hackmatrix.purejaxrl.network import NUM_ACTIONS
    from hackmatrix.purejaxrl.train import make_mesh, make_train

    env, config = env_and_config(args)
    trainer = make_train(config, env, mesh=make_mesh(jax.devices()[:1]))
    phases, network = trainer.phases, trainer.network
    num_envs, num_steps, batch = config.num_envs, config.num_steps, config.batch_size
    num_mb, epochs = config.num_minibatches, config.update_epochs
    env_params = env.EnvParams()
    runner = trainer.init(jax.random.PRNGKey(0))
    rows = []

    def record(name, fn, *fn_args, count=1, trips=1):
        """Time `fn` (jitted here), scale to one update by `count`, and add its cost analysis.

        XLA's cost analysis counts a loop body once; `trips` is the loop's trip
        count (for nested loops, the product: an estimate that counts the outer
        body's own work that many times too).
        """
        jitted = jax.jit(fn)
        wall, cpu, out = timed(jitted, *fn_args, repeats=args.repeats)
        row = {
            "phase": name,
            "wall_s": round(wall * count, 3),
            "cpu_s": round(cpu * count, 3),
            "cpu_us_per_step": round(cpu * count / batch * 1e6, 2),
            **cost(jitted, *fn_args),
        }
        for key in ("gflop", "gb_accessed"):
            row[key] = round(row[key] * count * trips, 2)
        rows.append(row)
        print(
            f"{name:<22} {row['wall_s']:>8.3f} {row['cpu_s']:>8.3f} {row['cpu_us_per_step']:>9.2f} "
            f"{row['gflop']:>9.1f} {row['gb_accessed']:>8.2f}",
            flush=True,
        )
        return out

    print(
        f"{num_envs} envs x {num_steps} steps = {batch:,} per update; "
        f"{num_mb} minibatches x {epochs} epochs; hidden {config.hidden_dim} x {config.num_layers}"
    )
    print(f"{'phase':<22} {'wall s':>8} {'cpu s':>8} {'cpu us/st':>9} {'GFLOP':>9} {'GB acc':>8}")

    # Whole update first (its output runner feeds the phase timings).
    update = phases["update"]
    runner_after, _ = record(
        "update (one jit)", lambda r: update(r), runner, trips=num_steps
    )  # rollout-dominated count; see learn

    rollout = phases["rollout"]
    _, traj, last_value = record("rollout", lambda r: rollout(r), runner, trips=num_steps)

    # rollout split: the env alone (uniform-logit sampling), sampling alone, forward alone.
    v_step = jax.vmap(env.step, in_axes=(0, 0, 0, None))
    v_mask = jax.vmap(env.action_mask)
    auto_reset = make_auto_reset(env, env_params, num_envs)
    zero_logits = jnp.zeros((num_envs, NUM_ACTIONS), jnp.float32)

    def env_only(env_state, obs, rng):
        def body(carry, _):
            state, obs, rng = carry
            rng, act_key, step_key, reset_key = jax.random.split(rng, 4)
            mask = v_mask(state)
            action, _ = distribution.sample(act_key, zero_logits, mask)
            obs, state, reward, done, info = v_step(
                jax.random.split(step_key, num_envs), state, action, env_params
            )
            state, obs = auto_reset(reset_key, done, state, obs)
            return (state, obs, rng), (obs[:, 0], reward, done)  # keep outputs small

        return jax.lax.scan(body, (env_state, obs, rng), None, num_steps)

    record("  env step+mask", env_only, runner.env_state, runner.obs, runner.rng, trips=num_steps)

    def sampling_only(logits, mask, rng):
        def body(rng, _):
            rng, key = jax.random.split(rng)
            action, empty = distribution.sample(key, logits, mask)
            return rng, (action, distribution.log_prob(logits, mask, action), empty)

        return jax.lax.scan(body, rng, None, num_steps)

    logits0, _ = network.apply(runner.train_state.params, runner.obs)
    record("  sampling", sampling_only, logits0, traj.mask[0], runner.rng, trips=num_steps)
    params = runner.train_state.params
    record("  forward", lambda p, o: network.apply(p, o), params, runner.obs, count=num_steps)

    compute_gae = phases["compute_gae"]
    advantages, targets = record("gae", compute_gae, traj, last_value, trips=num_steps)

    learn = phases["learn"]
    key = jax.random.PRNGKey(1)
    record(
        "learn", learn, runner.train_state, key, traj, advantages, targets, trips=epochs * num_mb
    )

    # learn split, one epoch each, scaled by the epoch count.
    flat = jax.tree_util.tree_map(
        lambda x: x.reshape((batch,) + x.shape[2:]), (traj, advantages, targets)
    )

    def shuffle_gather(batch_tree, key):
        permutation = jax.random.permutation(key, batch)
        return jax.tree_util.tree_map(
            lambda x: jnp.take(x, permutation, axis=0).reshape((num_mb, -1) + x.shape[1:]),
            batch_tree,
        )

    minibatches = record("  shuffle+gather", shuffle_gather, flat, key, count=epochs)
    del flat
    loss_fn = phases["loss_fn"]

    def fwd_bwd(params, minibatches):
        def body(total, minibatch):
            grads, losses = jax.grad(loss_fn, has_aux=True)(params, minibatch)
            return jax.tree_util.tree_map(jnp.add, total, grads), losses

        zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
        return jax.lax.scan(body, zeros, minibatches)

    grads, _ = record("  fwd/bwd", fwd_bwd, params, minibatches, count=epochs, trips=num_mb)
    del minibatches

    def optimizer_steps(train_state, grads):
        def body(state, _):
            return state.apply_gradients(grads=grads), None

        return jax.lax.scan(body, train_state, None, num_mb)[0]

    record("  optimizer", optimizer_steps, runner.train_state, grads, count=epochs, trips=num_mb)

    rollout_metrics = phases["rollout_metrics"]
    losses = {k: jnp.zeros((epochs, num_mb)) for k in ("a", "b", "c", "d", "e", "f", "g")}
    record(
        "metrics",
        lambda t, losses: ({k: v.mean() for k, v in losses.items()}, rollout_metrics(t)),
        traj,
        losses,
    )
    del runner_after
    return {
        "num_envs": num_envs,
        "num_steps": num_steps,
        "batch_size": batch,
        "num_minibatches": num_mb,
        "update_epochs": epochs,
        "hidden_dim": config.hidden_dim,
        "num_layers": config.num_layers,
        "rows": rows,
    }


def materialised_learn(trainer):
    """The learn phase as it was before issue 19: a shuffled copy of the whole batch per epoch.

    Kept here (not in the trainer) as the A/B reference for `--ab-learn`.
    """
    import jax
    import jax.numpy as jnp

    config, loss_fn = trainer.config, trainer.phases["loss_fn"]
    batch_size, num_mb = config.batch_size, config.num_minibatches

    def minibatch_step(train_state, minibatch):
        grads, losses = jax.grad(loss_fn, has_aux=True)(train_state.params, minibatch)
        return train_state.apply_gradients(grads=grads), losses

    def epoch_step(carry, _):
        train_state, rng, batch = carry
        rng, perm_key = jax.random.split(rng)
        permutation = jax.random.permutation(perm_key, batch_size)
        minibatches = jax.tree_util.tree_map(
            lambda x: jnp.take(x, permutation, axis=0).reshape((num_mb, -1) + x.shape[1:]), batch
        )
        train_state, losses = jax.lax.scan(minibatch_step, train_state, minibatches)
        return (train_state, rng, batch), losses

    def learn(train_state, epoch_key, traj, advantages, targets):
        flat = jax.tree_util.tree_map(
            lambda x: x.reshape((batch_size,) + x.shape[2:]), (traj, advantages, targets)
        )
        (train_state, _, _), losses = jax.lax.scan(
            epoch_step, (train_state, epoch_key, flat), None, config.update_epochs
        )
        return train_state, losses

    return learn


def ab_learn(args) -> dict:
    """Today's learn phase against the materialised one, alternating calls in this process."""
    import jax
    import numpy as np

    from hackmatrix.purejaxrl.train import make_mesh, make_train

    env, config = env_and_config(args)
    trainer = make_train(config, env, mesh=make_mesh(jax.devices()[:1]))
    runner = trainer.init(jax.random.PRNGKey(0))
    _, traj, last_value = jax.jit(trainer.phases["rollout"])(runner)
    advantages, targets = jax.jit(trainer.phases["compute_gae"])(traj, last_value)
    key = jax.random.PRNGKey(1)
    variants = {
        "A materialised": jax.jit(materialised_learn(trainer)),
        "B gathered per minibatch": jax.jit(trainer.phases["learn"]),
    }
    call_args = (runner.train_state, key, traj, advantages, targets)
    outputs = {name: jax.block_until_ready(fn(*call_args)) for name, fn in variants.items()}
    a, b = (jax.tree_util.tree_leaves(o[0].params) for o in outputs.values())
    identical = all(np.array_equal(x, y) for x, y in zip(a, b))
    del outputs, a, b
    times = {name: ([], []) for name in variants}
    for _ in range(args.repeats):
        for name, fn in variants.items():
            wall, cpu = time.perf_counter(), time.process_time()
            jax.block_until_ready(fn(*call_args))
            times[name][0].append(time.perf_counter() - wall)
            times[name][1].append(time.process_time() - cpu)
    result = {"identical_params": identical, "batch_size": config.batch_size}
    for name, (walls, cpus) in times.items():
        result[name] = {
            "wall_s": [round(t, 3) for t in walls],
            "cpu_s": [round(t, 3) for t in cpus],
            "median_wall_s": round(statistics.median(walls), 3),
            "median_cpu_s": round(statistics.median(cpus), 3),
        }
        print(
            f"{name:<26} wall {result[name]['median_wall_s']:>7.3f} s  "
            f"cpu {result[name]['median_cpu_s']:>7.3f} s  (walls {result[name]['wall_s']})"
        )
    print(f"parameters after learn bit-identical: {identical}")
    return result


def ab_devices(args) -> dict:
    """Whole updates on one XLA CPU device against the same batch split over two, alternating.

    Needs the two host devices requested before jax starts (main does that).
    The chunk is trainer.train_chunk itself, as bench_train.py runs it.
    """
    import jax

    from hackmatrix.purejaxrl.train import make_mesh, make_train

    env, config = env_and_config(args)
    devices = jax.devices()
    if len(devices) < 2:
        raise SystemExit("--ab-devices needs two XLA CPU devices (XLA_FLAGS already set a count?)")
    result = {"batch_size": config.batch_size}
    state = {}
    for name, mesh_devices in (("1 device", devices[:1]), ("2 devices", devices[:2])):
        trainer = make_train(config, env, mesh=make_mesh(mesh_devices))
        runner = trainer.init(jax.random.PRNGKey(0))
        start = time.perf_counter()
        compiled = trainer.train_chunk.lower(runner, 1).compile()
        result[name] = {
            "compile_s": round(time.perf_counter() - start, 1),
            "wall_s": [],
            "cpu_s": [],
        }
        runner, metrics = compiled(runner, 1)  # warm-up
        jax.block_until_ready(metrics)
        state[name] = [compiled, runner]
    for _ in range(args.repeats):
        for name, (compiled, runner) in state.items():
            wall, cpu = time.perf_counter(), time.process_time()
            runner, metrics = compiled(runner, 1)
            jax.block_until_ready(metrics)
            result[name]["wall_s"].append(round(time.perf_counter() - wall, 3))
            result[name]["cpu_s"].append(round(time.process_time() - cpu, 3))
            state[name][1] = runner
    for name in state:
        row = result[name]
        wall, cpu = statistics.median(row["wall_s"]), statistics.median(row["cpu_s"])
        row["steps_per_second"] = round(config.batch_size / wall, 1)
        row["cpu_us_per_step"] = round(cpu / config.batch_size * 1e6, 2)
        print(
            f"{name:<10} compile {row['compile_s']:>6.1f} s  "
            f"{row['steps_per_second']:>9,.0f} steps/s  "
            f"cpu {row['cpu_us_per_step']:>6.2f} us/step  (walls {row['wall_s']})"
        )
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-envs", type=int, default=2048)
    parser.add_argument("--num-steps", type=int, default=128)
    parser.add_argument("--hidden-dim", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--env-module", default="hackmatrix.jax_env")
    parser.add_argument("--output", default="bench_results/profile_train.json")
    parser.add_argument(
        "--ab-learn",
        action="store_true",
        help="A/B the learn phase against the materialised-shuffle version instead",
    )
    parser.add_argument(
        "--ab-devices",
        action="store_true",
        help="A/B whole updates on one XLA CPU device against two instead",
    )
    args = parser.parse_args()
    if args.ab_devices:
        from hackmatrix.host_devices import request_cpu_devices  # imports no jax

        request_cpu_devices(2)

    from hackmatrix.purejaxrl.device import enable_compilation_cache

    enable_compilation_cache()
    load_before = os.getloadavg()[0]
    if args.ab_devices:
        result = ab_devices(args)
    else:
        result = ab_learn(args) if args.ab_learn else profile(args)
    result["loadavg_1min_before_after"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
    print(f"load average (1 min) before/after: {result['loadavg_1min_before_after']}")
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
