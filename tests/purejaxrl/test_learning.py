"""The trainer must actually learn (bounded CPU budget; HACKMATRIX_SLOW=1 runs longer)."""

import os

import jax
import numpy as np
import pytest

from hackmatrix.analysis.returns import evaluate
from hackmatrix.purejaxrl.config import TrainConfig
from hackmatrix.purejaxrl.device import enable_compilation_cache
from hackmatrix.purejaxrl.metrics import aggregate_chunk
from hackmatrix.purejaxrl.train import make_train


def uniform_policy(params):
    params = jax.tree_util.tree_map(lambda x: x, params)
    head = params["params"][f"Dense_{len(params['params']) - 2}"]
    head["kernel"] = head["kernel"] * 0.0
    head["bias"] = head["bias"] * 0.0
    return params


@pytest.mark.slow
def test_ppo_beats_a_random_policy(game_module):
    enable_compilation_cache()
    total_steps = 1_500_000 if os.environ.get("HACKMATRIX_SLOW") == "1" else 300_000
    # Small net and a high LR so a CPU budget shows learning; the KL/clip
    # bounds below still have to hold.
    config = TrainConfig(
        num_envs=64,
        num_steps=32,
        hidden_dim=64,
        num_layers=2,
        num_minibatches=2,
        update_epochs=4,
        lr=2e-3,
        ent_coef=0.01,
        log_interval=8,
        total_timesteps=total_steps,
        seed=1,
    )
    trainer = make_train(config, game_module)
    runner = trainer.init(jax.random.PRNGKey(config.seed))
    kl, clip = [], []
    done = 0
    while done < config.num_updates:
        active = min(config.log_interval, config.num_updates - done)
        runner, per_update = trainer.train_chunk(runner, active)
        metrics = aggregate_chunk(jax.device_get(per_update), active)
        kl.append(metrics["train/approx_kl"])
        clip.append(metrics["train/clip_frac"])
        done += active

    key = jax.random.PRNGKey(123)
    params = runner.train_state.params
    # Zero logits everywhere = uniform over the valid actions; reusing the
    # sampled-policy evaluation this way needs no second compile.
    random = evaluate(game_module, trainer.network, uniform_policy(params), key, policy="sample")
    trained = evaluate(game_module, trainer.network, params, key, policy="sample")
    print(
        "random:",
        random,
        "\ntrained:",
        trained,
        "\nkl:",
        np.round(kl, 4),
        "\nclip:",
        np.round(clip, 3),
    )
    assert max(kl) < 0.06 and max(clip) < 0.30
    assert trained["eval/mean_episode_return"] > random["eval/mean_episode_return"] + 1.0
    assert trained["eval/stage1_exit_rate"] > random["eval/stage1_exit_rate"] + 0.08
