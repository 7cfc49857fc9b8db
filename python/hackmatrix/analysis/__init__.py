"""Evaluation, statistics, plots and gradient diagnostics, apart from the trainer.

Modules, each with one job:
    eval_stats    standard errors and paired comparisons of saved evaluation reports
    seed_stats    one configuration over several seeds: spread and targets met
    plot          PNG dashboards from runs' metrics.jsonl (`python -m hackmatrix.analysis.plot`)
    gradients     where a checkpoint's PPO gradient goes (policy, value, entropy parts)

The package imports jax, flax, optax and numpy, and from the rest of hackmatrix only the
trainer's network, distribution, checkpoint, metrics and health modules (and its update
step, for the gradient parts); matplotlib, Pillow and wandb are imported inside the
functions that draw or log. The trainer imports from here only for its callbacks at each
save. Importing this package imports nothing heavy; import the submodules you need.
"""
