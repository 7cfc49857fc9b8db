"""Evaluation, statistics, plots and gradient diagnostics, apart from the trainer.

Modules, each with one job:
    play            the one jitted loop every tool plays games through: a chooser picks
                    the actions, a key schedule gives the keys, a watcher counts and
                    records (training.md §9.9)
    choosers        policies as `play` calls them: greedy, sample, uniform random
    facts           one step's behaviour counters and the watcher that sums them
    games           the behaviour evaluation's fixed set of games (training.md §9.1)
    policies        what to evaluate, loaded from a path; the checkpoints to pool
    summary         the statistics of training.md §9.2 from per-game arrays (numpy)
    evaluation      one policy's (or a pool's) evaluation: play, summarize, time
    table           the console table
    report          the JSON document
    png             the figure
    checkpoint_eval the eval/* games at each save (the trainer's callback)
    episode_gif     the greedy-episode GIF at each save (the trainer's callback)
    returns         quick auto-reset returns, used by the learning test
    eval_stats      standard errors and paired comparisons of saved reports
    seed_stats      one configuration over several seeds: spread and targets met
    plot            PNG dashboards from runs' metrics.jsonl (`python -m hackmatrix.analysis.plot`)
    gradients       where a checkpoint's PPO gradient goes (policy, value, entropy parts)

The package imports jax, flax, optax and numpy, and from the rest of hackmatrix the
trainer's network, distribution, checkpoint, autoreset, metrics and health modules (and
its update step, for the gradient parts); matplotlib, Pillow (through hackmatrix.render)
and wandb are imported inside the functions that draw or log. The trainer imports from
here only its callbacks at each save. Importing this package imports nothing heavy;
import the submodules you need.
"""
