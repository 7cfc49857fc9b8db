"""`--reward-weights` (training.md §1.1, §3.2).

Parsing, the weighted sum, and the trainer's use of it.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import standin_env

from hackmatrix.purejaxrl import config as cfg
from hackmatrix.purejaxrl import shaping
from hackmatrix.purejaxrl.metrics import aggregate_chunk
from hackmatrix.purejaxrl.shaping.weights import weighted_sum
from hackmatrix.purejaxrl.train import make_train, reward_weight_vector

WEIGHTS = {"step_penalty": 0.0, "kills": 2.0, "distance_shaping": 0.5, "death_penalty": -1.5}


# ------------------------------------------------------------------- parsing


def test_parse_reward_weights_reads_pairs_in_order():
    assert cfg.parse_reward_weights(" kills = 2, step_penalty=0 ,victory=-1e-3") == {
        "kills": 2.0,
        "step_penalty": 0.0,
        "victory": -0.001,
    }
    args = cfg.build_parser().parse_args(["--reward-weights", "kills=2"])
    assert cfg.config_from_args(args).reward_weights == {"kills": 2.0}
    assert cfg.config_from_args(cfg.build_parser().parse_args([])).reward_weights is None


@pytest.mark.parametrize(
    "text, message",
    [
        ("kills", "expected name=weight pairs"),
        ("kills=2,", "expected name=weight pairs"),
        ("=2", "expected name=weight pairs"),
        ("kills=two", "not a number"),
        ("kills=nan", "must be finite"),
        ("kills=inf", "must be finite"),
        ("kills=1,kills=2", "given twice"),
    ],
)
def test_parse_reward_weights_rejects_bad_syntax(text, message):
    with pytest.raises(ValueError, match=message):
        cfg.parse_reward_weights(text)


def test_bad_flag_value_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit):
        cfg.build_parser().parse_args(["--reward-weights", "kills=x"])
    assert "--reward-weights" in capsys.readouterr().err


def test_unknown_names_are_listed_with_the_valid_ones(game_module):
    names = tuple(game_module.REWARD_COMPONENT_NAMES)
    with pytest.raises(ValueError) as error:
        cfg.check_reward_weight_names({"kills": 1.0, "kill": 2.0}, names)
    message = str(error.value)
    assert "unknown reward component(s) kill;" in message
    assert all(name in message for name in names)
    cfg.check_reward_weight_names(None, names)
    with pytest.raises(ValueError, match="valid names"):
        shaping.build(cfg.TrainConfig(reward_weights={"bogus": 1.0}), names)


def test_cli_refuses_unknown_names_before_creating_a_run(tmp_path, capsys):
    from hackmatrix.purejaxrl.cli import main

    code = main(
        [
            "--reward-weights",
            "kils=2",
            "--checkpoint-dir",
            str(tmp_path),
            "--no-wandb",
            "--num-envs",
            "4",
            "--num-steps",
            "4",
        ]
    )
    assert code == 2
    assert "valid names: step_penalty, stage_completion" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------- the weighted sum


def random_rollout(env, steps=40, num_envs=16, seed=0):
    """Rewards and components [steps, envs, 15] of uniformly random valid actions."""
    params = env.EnvParams()
    names = env.REWARD_COMPONENT_NAMES

    @jax.jit
    def run(key):
        obs, state = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(key, num_envs), params)

        def one(state, key):
            act_key, step_key = jax.random.split(key)
            mask = jax.vmap(env.action_mask)(state)
            logits = jnp.where(mask, 0.0, -1e9)
            action = jax.random.categorical(act_key, logits)
            _, state, reward, done, info = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
                jax.random.split(step_key, num_envs), state, action, params
            )
            comps = jnp.stack([info["reward_components"][n] for n in names], -1)
            return state, (reward, comps)

        _, out = jax.lax.scan(one, state, jax.random.split(key, steps))
        return out

    return jax.device_get(run(jax.random.PRNGKey(seed)))


def test_weighted_reward_is_the_stated_sum_exactly():
    # The sum's arithmetic, whatever the game: the stand-in's step penalty, distance shaping
    # and death penalty are weighted as the real game's are (that the real game's reward is
    # the sum of its components: tests/jax_env/test_properties.py).
    reward, comps = random_rollout(standin_env)
    names = standin_env.REWARD_COMPONENT_NAMES
    vector = reward_weight_vector(WEIGHTS, tuple(names))
    got = np.asarray(jax.jit(weighted_sum)(comps, vector))
    expected = np.zeros(reward.shape, np.float32)
    for i, name in enumerate(names):  # left to right in canonical order, float32
        expected = expected + np.float32(WEIGHTS.get(name, 1.0)) * comps[..., i]
    np.testing.assert_array_equal(got, expected)
    # the rollout exercised the weighted components (else the check proves little)
    assert np.any(comps[..., names.index("step_penalty")] != 0)
    assert np.any(comps[..., names.index("distance_shaping")] != 0)
    assert not np.array_equal(got, reward)
    # all weights 1 gives back the env's own total
    ones = reward_weight_vector({"kills": 1.0}, tuple(names))
    np.testing.assert_allclose(
        np.asarray(jax.jit(weighted_sum)(comps, ones)), reward, rtol=0, atol=1e-6
    )


def test_no_weights_means_no_recomputation():
    assert shaping.build(cfg.TrainConfig(reward_weights=None), ("step_penalty",)) == ()


# ------------------------------------------------------------------ the trainer


def first_update_metrics(game_module, weights):
    config = cfg.TrainConfig(
        num_envs=8,
        num_steps=32,
        hidden_dim=32,
        log_interval=1,
        num_minibatches=2,
        update_epochs=1,
        reward_weights=weights,
    )
    cfg.auto_scale_for_batch_size(config)
    trainer = make_train(config, game_module)
    runner = trainer.init(jax.random.PRNGKey(5))
    _, per_update = trainer.train_chunk(runner, 1)
    return jax.device_get(per_update), aggregate_chunk(jax.device_get(per_update), 1)


@pytest.fixture(scope="module")
def default_and_weighted():
    # Trainer plumbing: the stand-in game's rewards (its step penalty, distance shaping and
    # death penalty are weighted) show it as well as the real game's, at a fraction of the compile.
    return first_update_metrics(standin_env, None), first_update_metrics(standin_env, WEIGHTS)


def test_trainer_logs_canonical_and_weighted_rewards(default_and_weighted):
    (raw_default, default), (raw_weighted, weighted) = default_and_weighted
    assert "train/weighted_mean_reward" not in default
    assert "train/mean_weighted_episode_return" not in default
    # The first rollout is the same game in both runs: the canonical metrics are equal bit for bit.
    for key in ("train/mean_reward", "episode_return_sum", "train/num_episodes"):
        np.testing.assert_array_equal(raw_default[key], raw_weighted[key])
    for key in (k for k in default if k.startswith("reward/")):
        assert default[key] == weighted[key]
    expected = sum(
        WEIGHTS.get(k.split("/", 1)[1], 1.0) * v
        for k, v in weighted.items()
        if k.startswith("reward/")
    )
    assert weighted["train/weighted_mean_reward"] == pytest.approx(expected, abs=1e-5)
    assert weighted["train/weighted_mean_reward"] != pytest.approx(
        weighted["train/mean_reward"], abs=1e-4
    )
    assert "train/mean_weighted_episode_return" in weighted


def test_none_asks_for_the_envs_reward_over_an_earlier_flag():
    parse = cfg.build_parser().parse_args
    args = parse(["--reward-weights", "siphon_death_penalty=0.3", "--reward-weights", "None"])
    assert cfg.config_from_args(args).reward_weights is None
