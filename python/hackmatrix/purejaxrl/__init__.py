"""PureJaxRL-style action-masked PPO (and expert iteration) for the HackMatrix JAX engine.

Modules, each with one job:
    options       how an option is declared; the parser and flag reference made from declarations
    config        every option's declaration (TrainConfig, RunOptions), derived sizes,
                  batch auto-scaling, device tuning, checks
    presets       the preset files (presets/*.toml) and their checks
    resolve       defaults < preset < checkpoint < command line, each value's source
    device        device detection, compilation cache, multi-host start-up
    network       the shared-trunk ActorCritic
    distribution  masked sampling, log-probs and entropy
    autoreset     resetting only the envs that finished
    train         make_train: rollout, GAE, epochs/minibatches, jitted chunks
    expert_iteration  --algorithm expert-iteration: acting by search, the loss to its
                  improved policy (imports hackmatrix.search, so mctx, only when built)
    metrics       chunk aggregation, console line, metrics.jsonl and W&B
    checkpoint    atomic checkpoint files, loading, resume resolution, run names
    cli           the driver behind scripts/train_purejaxrl.py

Evaluation, the checkpoint GIF, statistics, plots and gradient diagnostics live in
hackmatrix.analysis; cli.py imports its two callbacks at each save from there.

Importing this package imports nothing heavy; import the submodules you need.
"""
