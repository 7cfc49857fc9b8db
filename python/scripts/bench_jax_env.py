#!/usr/bin/env python
"""Benchmark the JAX engine: env steps/s under a random valid-action policy, plus compile times.

Each measured call runs `--steps` vmapped steps inside one jitted lax.scan;
finished envs are reset in the loop with `reset_where`, which generates new
games only for the envs that finished. Prints a table and writes
JSON (default bench_results/bench_jax_env.json).

On a CPU the host is split into `--cpu-devices` XLA devices (default: one per
core) and each device steps its own share of the batch: one XLA device keeps
only ~1.6 of 2 cores busy (specs/performance.md). `--cpu-devices 1` measures
the single-device figure.
"""

import argparse
import json
import math
import os
import platform
import time

from hackmatrix.host_devices import request_cpu_devices


def steal_reading() -> tuple[int, int] | None:
    """(steal, total) CPU ticks since boot from /proc/stat; None off Linux."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
    except OSError:
        return None
    # cpu  user nice system idle iowait irq softirq steal [guest guest_nice, counted in user/nice]
    ticks = [int(x) for x in fields[1:9]]
    return (ticks[7] if len(ticks) > 7 else 0), sum(ticks)


def steal_percent(before: tuple[int, int] | None) -> float | None:
    """Percent of CPU time the hypervisor gave to other machines since `before`.

    On a shared virtual machine the same code ran 30-40% slower while its
    neighbours were busy; printing the steal beside a timing says which kind
    of hour it was measured in. None where the reading is unavailable.
    """
    if before is None:
        return None
    now = steal_reading()
    if now is None:
        return None
    total = now[1] - before[1]
    return 100.0 * (now[0] - before[0]) / total if total > 0 else 0.0


def positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--num-envs", type=positive_int, nargs="+", default=[1, 64, 1024, 2048, 4096, 16384]
    )
    parser.add_argument("--steps", type=positive_int, default=32, help="steps per measured call")
    parser.add_argument("--repeats", type=positive_int, default=2)
    parser.add_argument("--out", default="bench_results/bench_jax_env.json")
    parser.add_argument(
        "--hlo-stats",
        action="store_true",
        help="only compile the vmapped step at each --num-envs and print its fusions, while "
        "loops (data-dependent vs fixed trip count) and instructions (hackmatrix.hlo_stats); "
        "runs nothing",
    )
    parser.add_argument(
        "--step-form",
        choices=("gathered", "masked"),
        default=None,
        help="the step's compiled form (hackmatrix/jax_env/machinery/form.py); "
        "default: the backend's (gathered on CPU, masked on accelerators)",
    )
    parser.add_argument(
        "--ab-forms",
        action="store_true",
        help="time both step forms in one process, alternating call by call, and print "
        "the median steps/s of each at every --num-envs",
    )
    parser.add_argument(
        "--cpu-devices",
        type=positive_int,
        default=os.cpu_count() or 1,
        help="XLA devices the CPU is split into, each stepping its share of the batch "
        "(default: one per core; ignored on GPU/TPU, where every local device is used)",
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    # Parsed before jax is imported: XLA reads its device count once, at start-up.
    ARGS = parse_args()
    request_cpu_devices(ARGS.cpu_devices)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.sharding import Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

import hackmatrix.jax_env as J  # noqa: E402
from hackmatrix.hlo_stats import HloStats, compiled_stats  # noqa: E402
from hackmatrix.jax_env.machinery import form  # noqa: E402

try:  # jax >= 0.7; the engine's loops build constants that are the same on every device
    from jax import shard_map as _shard_map

    _UNCHECKED = {"check_vma": False}
except ImportError:
    from jax.experimental.shard_map import shard_map as _shard_map

    _UNCHECKED = {"check_rep": False}


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
    """A jitted (key, obs, states) -> (obs, states, key, finished episodes) running `steps` steps.

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


def make_sharded_rollout(num_envs, steps, devices):
    """`make_rollout` with the batch split evenly over `devices`, each stepping its own share.

    Takes one key per device ([len(devices), 2]) and returns one per device;
    the envs never interact, so each device runs the single-device rollout on
    its slice and nothing crosses between devices.
    """
    mesh = Mesh(devices, ("envs",))
    local_rollout = make_rollout(num_envs // len(devices), steps)

    def local(keys, obs, states):
        obs, states, key, finished = local_rollout(keys[0], obs, states)
        return obs, states, key[None], finished[None]

    spec = P("envs")
    sharded = _shard_map(
        local,
        mesh=mesh,
        in_specs=(spec, spec, spec),
        out_specs=(spec, spec, spec, spec),
        **_UNCHECKED,
    )
    return jax.jit(sharded), NamedSharding(mesh, spec)


def devices_for(num_envs, devices):
    """The most of `devices` that divide the batch evenly (1 env runs on one device)."""
    return devices[: math.gcd(num_envs, len(devices))]


def prepare(num_envs, steps, devices, step_form=None):
    """(compiled rollout, its first inputs, compile s, reset compile s) in a step form.

    `step_form` None: the backend's form (hackmatrix.jax_env.machinery.form).
    """
    step_form = step_form or form.default_form()
    keys = jax.random.split(jax.random.PRNGKey(0), len(devices))
    t0 = time.perf_counter()
    with form.using(step_form):
        reset = jax.jit(jax.vmap(J.reset))
        obs, states = reset(jax.random.split(jax.random.PRNGKey(1), num_envs))
        jax.block_until_ready(states)
        reset_compile = time.perf_counter() - t0
        rollout, sharding = make_sharded_rollout(num_envs, steps, devices)
        inputs = jax.device_put((keys, obs, states), sharding)
        t0 = time.perf_counter()
        compiled = rollout.lower(*inputs).compile()
    compile_s = time.perf_counter() - t0
    keys, obs, states = inputs
    obs, states, keys, _ = compiled(keys, obs, states)  # warm-up
    jax.block_until_ready(states)
    return compiled, (keys, obs, states), compile_s, reset_compile


def timed_call(compiled, inputs):
    """(seconds, next inputs, finished episodes) of one call."""
    keys, obs, states = inputs
    t0 = time.perf_counter()
    obs, states, keys, done = compiled(keys, obs, states)
    jax.block_until_ready((obs, states))
    return time.perf_counter() - t0, (keys, obs, states), int(jnp.sum(done))


def bench(num_envs, steps, repeats, devices, step_form=None):
    devices = devices_for(num_envs, devices)
    compiled, inputs, compile_s, reset_compile = prepare(num_envs, steps, devices, step_form)
    best = float("inf")
    episodes = 0
    steal_before = steal_reading()
    for _ in range(repeats):
        seconds, inputs, done = timed_call(compiled, inputs)
        best = min(best, seconds)
        episodes += done
    steal = steal_percent(steal_before)
    return {
        "num_envs": num_envs,
        "devices": len(devices),
        "step_form": step_form or form.default_form(),
        "steps_per_call": steps,
        "seconds_per_call": best,
        "steps_per_second": num_envs * steps / best,
        "rollout_compile_s": compile_s,
        "reset_compile_s": reset_compile,
        "episodes_finished": episodes,
        "cpu_steal_percent": steal,
    }


def ab_forms(num_envs, steps, repeats, devices):
    """Steps/s of both step forms in one process, alternating call by call (same hour).

    Returns {form: [steps/s of each call]}; the forms give the same results bit for bit
    (tests/jax_env/test_step_fingerprint.py), so only the time differs.
    """
    devices = devices_for(num_envs, devices)
    prepared = {f: list(prepare(num_envs, steps, devices, f)[:2]) for f in form.FORMS}
    rates = {f: [] for f in form.FORMS}
    for _ in range(repeats):
        for f, entry in prepared.items():
            seconds, entry[1], _ = timed_call(*entry)
            rates[f].append(num_envs * steps / seconds)
    return rates


def step_compile_time(step_form=None):
    """Compile time of the vmapped step alone (batch 64)."""
    return step_hlo_stats(64, step_form)[1]


def step_hlo_stats(num_envs: int, step_form: str | None = None) -> tuple[HloStats, float]:
    """(HloStats, compile seconds) of the vmapped step (J.step, observation included) at a batch.

    The step is compiled for the default device of the current backend, alone
    (no rollout loop around it), so the counts are the step's own.
    """
    _, states = jax.jit(jax.vmap(J.reset))(jax.random.split(jax.random.PRNGKey(1), num_envs))
    v_step = jax.jit(jax.vmap(J.step, in_axes=(None, 0, 0)))
    t0 = time.perf_counter()
    with form.using(step_form or form.default_form()):
        compiled = v_step.lower(None, states, jnp.zeros(num_envs, jnp.int32)).compile()
    return compiled_stats(compiled), time.perf_counter() - t0


def print_hlo_stats(args):
    device = jax.local_devices()[0]
    step_form = args.step_form or form.default_form()
    results = {"device": str(device), "step_form": step_form, "runs": []}
    for n in args.num_envs:
        stats, compile_s = step_hlo_stats(n, step_form)
        print(
            f"{n:>7} envs ({device.platform}, {step_form} form, compile {compile_s:.1f} s): "
            f"{stats.summary()}"
        )
        print(f"        ops outside fusions: {stats.top_opcodes}", flush=True)
        results["runs"].append({"num_envs": n, "compile_s": compile_s, **stats.as_dict()})
    out = args.out.replace(".json", "_hlo.json")
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out, "w") as f:
        json.dump(results, f, indent=2)
    print(f"wrote {out}")


def print_ab_forms(args, devices):
    results = {"device": str(devices[0]), "devices": len(devices), "runs": []}
    for n in args.num_envs:
        rates = ab_forms(n, args.steps, args.repeats, devices)
        medians = {f: sorted(r)[len(r) // 2] for f, r in rates.items()}
        print(
            f"{n:>7} envs: "
            + ", ".join(f"{f} median {medians[f]:,.0f} steps/s" for f in form.FORMS)
            + f" (masked/gathered {medians[form.MASKED] / medians[form.GATHERED]:.2f}; "
            f"{args.repeats} alternating calls each)",
            flush=True,
        )
        results["runs"].append({"num_envs": n, "steps_per_second": rates, "medians": medians})
    out = args.out.replace(".json", "_ab_forms.json")
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out, "w") as f:
        json.dump(results, f, indent=2)
    print(f"wrote {out}")


def main(args):
    if args.hlo_stats:
        print_hlo_stats(args)
        return
    devices = jax.local_devices()
    if devices[0].platform == "cpu":
        if len(devices) < args.cpu_devices:
            print(
                f"note: XLA has {len(devices)} CPU device(s), "
                f"fewer than --cpu-devices {args.cpu_devices} "
                "(XLA_FLAGS already set a device count?)"
            )
        devices = devices[: args.cpu_devices]
    if args.ab_forms:
        print_ab_forms(args, devices)
        return
    results = {
        "device": str(devices[0]),
        "devices": len(devices),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "vmapped_step_compile_s": step_compile_time(args.step_form),
        "runs": [],
    }
    print(
        f"{len(devices)} x {devices[0].device_kind} ({devices[0].platform}); "
        f"vmapped step compile: {results['vmapped_step_compile_s']:.1f} s"
    )
    print(
        f"{'num_envs':>9} {'devices':>8} {'steps/s':>12} {'s/call':>9} {'compile s':>10} "
        f"{'episodes':>9} {'steal %':>8}"
    )
    for n in args.num_envs:
        r = bench(n, args.steps, args.repeats, devices, args.step_form)
        results["runs"].append(r)
        steal = "-" if r["cpu_steal_percent"] is None else f"{r['cpu_steal_percent']:.0f}"
        print(
            f"{n:>9} {r['devices']:>8} {r['steps_per_second']:>12.0f} "
            f"{r['seconds_per_call']:>9.3f} {r['rollout_compile_s']:>10.1f} "
            f"{r['episodes_finished']:>9} {steal:>8}",
            flush=True,
        )
    best = max(results["runs"], key=lambda r: r["steps_per_second"])
    results["best"] = {
        "num_envs": best["num_envs"],
        "devices": best["devices"],
        "steps_per_second": best["steps_per_second"],
    }
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)
    print(
        f"best: {best['steps_per_second']:.0f} steps/s at num_envs={best['num_envs']}; "
        f"wrote {args.out}"
    )


if __name__ == "__main__":
    main(ARGS)
