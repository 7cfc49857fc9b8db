"""`--value-warmup-updates N` (training.md §2.6): the first N updates move only the value
head's layer; and a head that learned another `--value-target` scale starts from zero.

The switch and its checks, the masked optimizer step on both networks, and real runs: a
warm-up from another run's weights leaves every other layer bit for bit as it was, then
the whole network trains.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import schedule_config, standin_run
from flax.training.train_state import TrainState

from hackmatrix.purejaxrl import config as cfg
from hackmatrix.purejaxrl import levers
from hackmatrix.purejaxrl.checkpoint import load_params, stored_config
from hackmatrix.purejaxrl.network import (
    OBS_SIZE,
    make_network,
    value_head_layer,
    with_value_head_zeroed,
)
from hackmatrix.purejaxrl.train import apply_gradients_value_only, make_optimizer, value_only_at

# ------------------------------------------------------------------ the switch


def test_only_the_head_moves_before_the_given_update():
    config = schedule_config(100, value_warmup_updates=40)
    assert [value_only_at(config, u) for u in (0, 39, 40, 99)] == [1.0, 1.0, 0.0, 0.0]
    assert "value_only" in levers.run_schedules(config, ())


def test_by_default_every_layer_moves_from_the_start():
    config = schedule_config(100)
    assert config.value_warmup_updates == 0
    assert value_only_at(config, 0) == 0.0
    assert "value_only" not in levers.run_schedules(config, ())


@pytest.mark.parametrize("bad", [-1, 2.5, True])
def test_bad_settings_are_refused(bad):
    with pytest.raises(ValueError, match="--value-warmup-updates must be a whole number"):
        schedule_config(100, value_warmup_updates=bad)


def test_a_warm_up_that_fills_the_run_is_noted_not_refused():
    config = schedule_config(100, value_warmup_updates=100)
    note = cfg.value_warmup_note(config)
    assert "update 100" in note and "only the value head moves in this run" in note
    assert cfg.value_warmup_note(schedule_config(100, value_warmup_updates=99)) is None
    assert cfg.value_warmup_note(schedule_config(100)) is None


# ------------------------------------------------------------------ the optimizer step


def leaves_equal(a, b) -> bool:
    pairs = zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b))
    return all(np.array_equal(x, y) for x, y in pairs)


@pytest.mark.parametrize("kind, head", [("mlp", "Dense_3"), ("grid", "critic")])
def test_the_masked_step_moves_the_head_alone_and_is_the_plain_step_when_off(kind, head):
    network = make_network(32, 2, False, kind)
    params = network.init(jax.random.PRNGKey(0), jnp.zeros((1, OBS_SIZE)))
    assert value_head_layer(params) == head
    config = cfg.TrainConfig(network=kind, hidden_dim=32)
    state = TrainState.create(apply_fn=network.apply, params=params, tx=make_optimizer(config))
    key = jax.random.PRNGKey(1)
    grads = jax.tree_util.tree_map(lambda p: jax.random.normal(key, p.shape), params)

    warm = apply_gradients_value_only(state, grads, jnp.float32(1))
    for name, layer in params["params"].items():
        assert leaves_equal(warm.params["params"][name], layer) == (name != head), name
    # The optimizer saw every gradient: its state is the plain step's.
    plain = state.apply_gradients(grads=grads)
    assert leaves_equal(warm.opt_state, plain.opt_state) and int(warm.step) == 1
    # Switched off, it is the plain step bit for bit.
    assert leaves_equal(apply_gradients_value_only(state, grads, jnp.float32(0)), plain)


def test_a_zeroed_head_reads_zero_and_leaves_the_rest():
    network = make_network(32, 2, False, "grid")
    params = network.init(jax.random.PRNGKey(0), jnp.zeros((1, OBS_SIZE)))
    zeroed = with_value_head_zeroed(params)
    obs = jax.random.uniform(jax.random.PRNGKey(2), (4, OBS_SIZE))
    logits, value = network.apply(params, obs)
    zero_logits, zero_value = network.apply(zeroed, obs)
    np.testing.assert_array_equal(zero_value, np.zeros(4, np.float32))
    np.testing.assert_array_equal(zero_logits, logits)
    assert np.abs(np.asarray(params["params"]["critic"]["kernel"])).max() > 0  # not in place


# ------------------------------------------------------------------ real runs


def layers_of(path):
    return load_params(path)["params"]


def test_a_warm_up_from_another_runs_weights_keeps_the_rest_until_its_update(tmp_path, capsys):
    standin_run(tmp_path, "source", 2)
    source = layers_of(tmp_path / "source" / "checkpoint_2.pkl")
    records = standin_run(
        tmp_path,
        "warm",
        6,
        "--init-from",
        str(tmp_path / "source" / "checkpoint_2.pkl"),
        "--value-warmup-updates",
        "3",
    )
    assert "value_warmup_updates" in capsys.readouterr().out  # the configuration table
    chunks = [r for r in records if "train/total_loss" in r]
    # The chunk of updates 2-3 (0-based) holds the last warm-up update and the first full one.
    assert [(r["update"], r["train/value_only"]) for r in chunks] == [(2, 1.0), (4, 0.5), (6, 0.0)]
    head = "Dense_3"  # the tiny runs' mlp: two hidden layers, actor Dense_2, critic Dense_3
    after_warm_up = layers_of(tmp_path / "warm" / "checkpoint_2.pkl")
    for name in source:
        assert leaves_equal(after_warm_up[name], source[name]) == (name != head), name
    trained = layers_of(tmp_path / "warm" / "checkpoint_6.pkl")
    assert not any(leaves_equal(trained[name], source[name]) for name in source)
    assert stored_config(tmp_path / "warm" / "final_params.npz")["value_warmup_updates"] == 3


def test_a_head_of_another_scale_starts_from_zero(tmp_path, capsys):
    standin_run(tmp_path, "raw", 2)
    capsys.readouterr()
    # The whole run is warm-up: the head is all that moves, from zero.
    standin_run(
        tmp_path,
        "symlog",
        3,
        "--init-from",
        str(tmp_path / "raw" / "checkpoint_2.pkl"),
        "--value-target",
        "symlog",
        "--value-warmup-updates",
        "3",
    )
    out = capsys.readouterr().out
    assert "learned its value head on the raw scale" in out
    assert "the head's layer starts from zero (V = 0)" in out
    assert "only the value head moves in this run" in out
    raw = layers_of(tmp_path / "raw" / "checkpoint_2.pkl")
    warm = layers_of(tmp_path / "symlog" / "checkpoint_2.pkl")
    assert all(leaves_equal(warm[n], raw[n]) for n in ("Dense_0", "Dense_1", "Dense_2"))
    # Eight small Adam steps from zero, against the source's initialised kernel.
    assert np.abs(np.asarray(raw["Dense_3"]["kernel"])).max() > 0.05
    assert np.abs(np.asarray(warm["Dense_3"]["kernel"])).max() < 0.01
