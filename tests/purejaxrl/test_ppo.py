"""Network, masked distribution and the PPO update itself (training.md §2)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import standin_env

from hackmatrix.purejaxrl import distribution
from hackmatrix.purejaxrl.config import TrainConfig, auto_scale_for_batch_size
from hackmatrix.purejaxrl.metrics import aggregate_chunk
from hackmatrix.purejaxrl.network import ActorCritic, make_network
from hackmatrix.purejaxrl.train import make_train


def test_default_network_size_and_parameter_names():
    params = ActorCritic().init(jax.random.PRNGKey(0), jnp.zeros((1, 1545)))
    assert sum(x.size for x in jax.tree_util.tree_leaves(params)) == 469_021
    assert sorted(params["params"]) == ["Dense_0", "Dense_1", "Dense_2", "Dense_3"]
    assert params["params"]["Dense_2"]["kernel"].shape == (256, 28)  # actor head
    assert params["params"]["Dense_3"]["kernel"].shape == (256, 1)  # critic head


def test_bf16_keeps_float32_params_and_outputs():
    net = make_network(32, 2, bf16=True)
    params = net.init(jax.random.PRNGKey(0), jnp.zeros((1, 1545)))
    assert all(x.dtype == jnp.float32 for x in jax.tree_util.tree_leaves(params))
    logits, value = net.apply(params, jnp.ones((3, 1545)))
    assert logits.dtype == jnp.float32 and value.shape == (3,)


def test_sampling_only_picks_valid_actions():
    mask = jnp.zeros((4000, 28), bool).at[:, 3].set(True).at[:, 17].set(True)
    logits = jnp.zeros((4000, 28)).at[:, 0].set(50.0)  # the invalid favourite must never win
    action, empty = distribution.sample(jax.random.PRNGKey(1), logits, mask)
    assert set(np.unique(action).tolist()) == {3, 17} and not bool(empty.any())
    share = float(jnp.mean(action == 3))
    assert 0.45 < share < 0.55


def test_entropy_covers_valid_actions_only():
    mask = jnp.zeros((2, 28), bool).at[0, :4].set(True).at[1, :5].set(True)
    ent = distribution.entropy(jnp.zeros((2, 28)), mask)
    np.testing.assert_allclose(ent, [np.log(4), np.log(5)], rtol=1e-6)
    logp = distribution.log_prob(jnp.zeros((2, 28)), mask, jnp.array([1, 4]))
    np.testing.assert_allclose(logp, [-np.log(4), -np.log(5)], rtol=1e-6)


def test_empty_mask_is_flagged_not_silently_sampled():
    mask = jnp.zeros((2, 28), bool).at[1, 6].set(True)
    action, empty = distribution.sample(jax.random.PRNGKey(0), jnp.zeros((2, 28)), mask)
    assert empty.tolist() == [True, False] and int(action[1]) == 6
    assert int(distribution.greedy(jnp.arange(28.0)[None], mask[1:])[0]) == 6


def sharpen_policy(runner, factor=20.0):
    """Scale the actor head so the policy is far from uniform (stale obs would then show in KL)."""
    params = runner.train_state.params
    head = "actor" if "actor" in params["params"] else f"Dense_{len(params['params']) - 2}"
    params = jax.tree_util.tree_map(lambda x: x, params)
    params["params"][head]["kernel"] = params["params"][head]["kernel"] * factor
    return runner._replace(train_state=runner.train_state.replace(params=params))


# The mlp plays the real game (its own batched reset_where feeds the next observations);
# the grid network, whose compile is the slow one, the stand-in game (its slot resets).
@pytest.mark.parametrize("network, real_game", [("mlp", True), ("grid", False)])
def test_lr_zero_update_has_zero_kl_and_no_clipping_and_skipped_updates_are_no_ops(
    game_module, network, real_game
):
    config = TrainConfig(
        num_envs=8,
        num_steps=32,
        lr=0.0,
        hidden_dim=32,
        log_interval=1,
        num_minibatches=2,
        update_epochs=2,
        network=network,
        max_grad_norm=0.0,  # every minibatch step is clipped (lr 0: nothing moves anyway)
    )
    auto_scale_for_batch_size(config)
    trainer = make_train(config, game_module if real_game else standin_env)
    runner = sharpen_policy(trainer.init(jax.random.PRNGKey(3)))

    # An inactive update (the masked remainder of a chunk) changes nothing at all.
    snapshot = jax.tree_util.tree_map(np.asarray, (runner.train_state, runner.rng, runner.obs))
    runner, skipped = trainer.train_chunk(runner, 0)
    jax.tree_util.tree_map(
        np.testing.assert_array_equal, snapshot, (runner.train_state, runner.rng, runner.obs)
    )
    assert float(np.asarray(skipped["train/num_episodes"]).sum()) == 0.0

    before = jax.tree_util.tree_map(np.asarray, runner.train_state.params)
    runner, per_update = trainer.train_chunk(runner, 1)
    metrics = aggregate_chunk(jax.device_get(per_update), 1)
    assert metrics["train/approx_kl"] < 1e-6
    assert metrics["train/clip_frac"] == 0.0
    assert metrics["train/grad_norm"] > 0.0 and metrics["train/grad_clipped_frac"] == 1.0
    assert metrics["stats/empty_mask_steps"] == 0.0
    # the reward breakdown adds up to the mean reward
    total = sum(v for k, v in metrics.items() if k.startswith("reward/"))
    assert total == pytest.approx(metrics["train/mean_reward"], abs=1e-5)
    assert metrics["reward/step_penalty"] == pytest.approx(-0.01, abs=1e-6)
    after = jax.tree_util.tree_map(np.asarray, runner.train_state.params)
    jax.tree_util.tree_map(np.testing.assert_array_equal, before, after)


def test_chunk_aggregation_uses_ratios_of_sums_and_max_stage():
    per_update = {
        "train/num_episodes": np.array([0.0, 2.0, 1.0]),
        "episode_return_sum": np.array([0.0, 3.0, 3.0]),
        "episode_length_sum": np.array([0.0, 10.0, 20.0]),
        "stats/highest_stage": np.array([1.0, 2.0, 99.0]),
        "stats/empty_mask_steps": np.array([0.0, 1.0, 9.0]),
        "train/entropy": np.array([1.0, 2.0, 99.0]),
    }
    out = aggregate_chunk(per_update, 2)  # third update inactive
    assert out["train/mean_episode_return"] == 1.5
    assert out["train/mean_episode_length"] == 5.0
    assert out["stats/highest_stage"] == 2.0
    assert out["stats/empty_mask_steps"] == 1.0
    assert out["train/entropy"] == 1.5
