"""PureJaxRL-style action-masked PPO for the HackMatrix JAX engine.

Modules, each with one job:
    config        flags, defaults, derived sizes, batch auto-scaling, device tuning
    device        device detection, compilation cache, multi-host start-up
    network       the shared-trunk ActorCritic
    distribution  masked sampling, log-probs and entropy
    autoreset     resetting only the envs that finished
    train         make_train: rollout, GAE, epochs/minibatches, jitted chunks
    metrics       chunk aggregation, console line, metrics.jsonl and W&B
    checkpoint    atomic checkpoint files, loading, resume resolution, run names
    cli           the driver behind scripts/train_purejaxrl.py

Evaluation, the checkpoint GIF, statistics, plots and gradient diagnostics live in
hackmatrix.analysis; cli.py imports its two callbacks at each save from there.

Importing this package imports nothing heavy; import the submodules you need.
"""
