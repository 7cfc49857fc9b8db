"""Where a checkpoint's PPO gradient goes: its policy, value and entropy parts (training.md §3.8).

The policy and the value share every layer but the two heads, and the value loss is a
squared error on the raw return, whose scale grows as an agent reaches later stages. This
plays fresh rollouts from a checkpoint's own env batch with exactly the inputs its next
update would get, and takes the gradient of each term of the loss separately on each
minibatch: the norm of each part over all layers and over the shared ones, the cosine
between the policy's and the value's parts in the shared layers, and how many minibatch
steps the `max_grad_norm` clip scales down. The parameters are not changed.

Only jax, optax and numpy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from ..purejaxrl.train import LossInputs, Trainer

# The loss terms, in the order they are reported (the program-choice entropy only with
# --ent-coef-programs).
PARTS = ("policy", "value", "entropy", "program_choice_entropy")


def head_names(params: Any) -> tuple[str, str]:
    """(actor, critic) parameter-group names: the grid network's `actor`/`critic`, or the
    MLP's last two `Dense_i` (training.md §2.3)."""
    names = set(params["params"])
    if {"actor", "critic"} <= names:
        return "actor", "critic"
    dense = sorted(int(n.split("_")[1]) for n in names if n.startswith("Dense_"))
    if len(dense) < 2:
        raise ValueError(f"cannot tell the heads among the parameter groups {sorted(names)}")
    return f"Dense_{dense[-2]}", f"Dense_{dense[-1]}"


def shared_layers(tree: Any, heads: tuple[str, str]) -> dict:
    """The part of a parameter-shaped tree outside the two heads."""
    return {name: value for name, value in tree["params"].items() if name not in heads}


def _norm(tree: Any) -> float:
    return float(optax.global_norm(tree))


def _cosine(a: Any, b: Any) -> float:
    dot = sum(
        float(jnp.vdot(x, y)) for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True)
    )
    scale = _norm(a) * _norm(b)
    return dot / scale if scale > 0 else float("nan")


@dataclass
class GradientReport:
    """Per-minibatch numbers (one dict per minibatch step) and per-rollout target facts."""

    max_grad_norm: float
    vf_coef: float
    ent_coef: float
    minibatch_steps: int
    minibatches: list[dict[str, float]] = field(default_factory=list)
    rollouts: list[dict[str, float]] = field(default_factory=list)

    def median(self, key: str) -> float:
        values = [row[key] for row in self.minibatches if key in row]
        return float(np.median(values)) if values else float("nan")

    def clipped(self) -> int:
        return sum(row["total"] > self.max_grad_norm for row in self.minibatches)


def gradient_parts(
    trainer: Trainer,
    runner: Any,
    update_inputs: dict[str, Any],
    *,
    rollouts: int = 2,
    seed: int = 0,
) -> GradientReport:
    """Play `rollouts` rollouts from `runner` (its parameters fixed) and split the loss
    gradient of every minibatch (one epoch's shuffle each) into its parts.

    `update_inputs` are the traced inputs of the checkpoint's next update (one row of
    `Trainer.chunk_inputs`): env params, weights, ent_coef, program levers."""
    config, phases = trainer.config, trainer.phases
    levers = update_inputs.get("program_levers")
    ent_coef = update_inputs.get("ent_coef")
    ent_coef_programs = None
    if config.ent_coef_programs:  # as `update` does: off while the levers wait
        switch = 1.0 if levers is None else levers
        ent_coef_programs = jnp.float32(config.ent_coef_programs) * switch
    rollout = jax.jit(lambda r: phases["rollout"](r, update_inputs))
    gae = jax.jit(phases["compute_gae"])

    def loss(params, minibatch):
        return phases["loss_fn"](params, minibatch, ent_coef, ent_coef_programs)

    def term(params, minibatch, name):
        total, aux = loss(params, minibatch)
        c_ent = config.ent_coef if ent_coef is None else ent_coef
        policy, value = aux["train/pg_loss"], config.vf_coef * aux["train/vf_loss"]
        entropy = -c_ent * aux["train/entropy"]
        terms = {
            "policy": policy,
            "value": value,
            "entropy": entropy,
            # What the total holds beyond the three: the program-choice entropy term.
            "program_choice_entropy": total - policy - value - entropy,
            "total": total,
        }
        return terms[name]

    names = ("policy", "value", "entropy", "total") + (
        ("program_choice_entropy",) if ent_coef_programs is not None else ()
    )
    grads = {n: jax.jit(jax.grad(lambda p, mb, n=n: term(p, mb, n))) for n in names}

    params = runner.train_state.params
    heads = head_names(params)
    minibatches = int(config.num_minibatches or 1)  # make_train has checked it is set
    batch = config.num_envs * config.num_steps
    size = batch // minibatches
    report = GradientReport(
        max_grad_norm=config.max_grad_norm,
        vf_coef=config.vf_coef,
        ent_coef=float(config.ent_coef if ent_coef is None else ent_coef),
        minibatch_steps=size,
    )
    rng = np.random.default_rng(seed)
    for _ in range(rollouts):
        runner, traj, last_value = rollout(runner)
        advantages, targets = gae(traj, last_value)
        inputs = LossInputs(
            obs=traj.obs, mask=traj.mask, action=traj.action, log_prob=traj.log_prob
        )
        flat = jax.tree.map(
            lambda x: x.reshape((batch,) + x.shape[2:]), (inputs, advantages, targets)
        )
        report.rollouts.append(
            {
                "episodes": float(jnp.sum(traj.done)),
                "target_mean": float(jnp.mean(targets)),
                "target_sd": float(jnp.std(targets)),
                "target_min": float(jnp.min(targets)),
                "target_max": float(jnp.max(targets)),
            }
        )
        order = rng.permutation(batch)
        for k in range(minibatches):
            rows = order[k * size : (k + 1) * size]
            minibatch = jax.tree.map(lambda x, rows=rows: x[rows], flat)
            parts = {n: g(params, minibatch) for n, g in grads.items()}
            row = {}
            for n, g in parts.items():
                row[n] = _norm(g)
                row[f"{n}_shared"] = _norm(shared_layers(g, heads))
            summed = jax.tree.map(lambda *xs: sum(xs), *(parts[n] for n in names if n != "total"))
            row["parts_sum_error"] = _norm(jax.tree.map(jnp.subtract, summed, parts["total"]))
            row["cosine_shared"] = _cosine(
                shared_layers(parts["policy"], heads), shared_layers(parts["value"], heads)
            )
            row["value_over_policy_shared"] = row["value_shared"] / max(row["policy_shared"], 1e-12)
            report.minibatches.append(row)
    return report


def format_report(report: GradientReport, source: str) -> str:
    """The medians over the minibatch steps, one row per part, then the rollouts' targets."""
    n = len(report.minibatches)
    labels = {
        "policy": "policy (clipped surrogate)",
        "value": f"value (x vf_coef {report.vf_coef:g})",
        "entropy": f"entropy (x ent_coef {report.ent_coef:g})",
        "program_choice_entropy": "program-choice entropy",
        "total": "total",
    }
    lines = [
        f"Gradient parts of {source}: {len(report.rollouts)} rollout(s) x "
        f"{n // max(len(report.rollouts), 1)} minibatches of {report.minibatch_steps:,} steps; "
        f"medians over the {n} minibatch steps (global L2 norms)",
        f"  {'part':<34} {'all layers':>10} {'shared':>10}",
    ]
    for key, label in labels.items():
        if key in report.minibatches[0]:
            lines.append(
                f"  {label:<34} {report.median(key):>10.4f} {report.median(key + '_shared'):>10.4f}"
            )
    lines += [
        f"  {'value / policy, shared layers':<34} {'':>10} "
        f"{report.median('value_over_policy_shared'):>10.2f}",
        f"  {'cosine policy, value, shared':<34} {'':>10} {report.median('cosine_shared'):>10.2f}",
        f"  minibatch steps the clip scales down (total > max_grad_norm {report.max_grad_norm:g}): "
        f"{report.clipped()} of {n}",
    ]
    for i, r in enumerate(report.rollouts, 1):
        lines.append(
            f"  rollout {i}: {r['episodes']:.0f} episodes ended; value targets mean "
            f"{r['target_mean']:.2f}, sd {r['target_sd']:.2f}, "
            f"range {r['target_min']:.1f}..{r['target_max']:.1f}"
        )
    return "\n".join(lines)
