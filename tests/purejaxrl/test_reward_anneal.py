"""`--reward-weights-anneal` (training.md §1.1): the weights move linearly to 1,
or to `--reward-weights-final`.

The schedule itself, its checks, the traced weight vector of the chunk, and a
real run that logs the progress.
"""

import jax
import numpy as np
import pytest
import standin_env
from conftest import schedule_config, standin_run

from hackmatrix.purejaxrl import config as cfg
from hackmatrix.purejaxrl.checkpoint import stored_config
from hackmatrix.purejaxrl.metrics import aggregate_chunk
from hackmatrix.purejaxrl.train import (
    make_train,
    reward_anneal_progress,
    reward_weight_vector,
    reward_weights_at,
)

NAMES = tuple(standin_env.REWARD_COMPONENT_NAMES)
WEIGHTS = {"step_penalty": 0.0, "death_penalty": 0.2, "distance_shaping": 3.0}


def annealed_config(anneal, num_updates=100, weights=WEIGHTS, final=None):
    return schedule_config(
        num_updates,
        reward_weights=weights,
        reward_weights_anneal=anneal,
        reward_weights_final=final,
    )


# ------------------------------------------------------------------ the schedule


def test_weights_move_linearly_to_one_then_stay():
    config = annealed_config(0.5)  # 100 updates: canonical from update 50 on
    assert reward_weights_at(config, 0) == WEIGHTS
    assert reward_weights_at(config, 25) == pytest.approx(
        {"step_penalty": 0.5, "death_penalty": 0.6, "distance_shaping": 2.0}
    )
    for update in (50, 80, 99):
        assert reward_weights_at(config, update) == dict.fromkeys(WEIGHTS, 1.0)
    assert [reward_anneal_progress(config, u) for u in (0, 10, 50, 99)] == [0.0, 0.2, 1.0, 1.0]


def test_weights_move_to_the_final_weights_when_given():
    # A light siphon price that hardens: 0.1 -> 0.3 over the first half; a component only in
    # the final weights starts at 1, and one only in the start weights still ends at 1.
    final = {"death_penalty": 0.3, "kills": 2.0}
    config = annealed_config(0.5, final=final)
    assert reward_weights_at(config, 0) == {**WEIGHTS, "kills": 1.0}
    assert reward_weights_at(config, 25) == pytest.approx(
        {"step_penalty": 0.5, "death_penalty": 0.25, "distance_shaping": 2.0, "kills": 1.5}
    )
    for update in (50, 99):
        assert reward_weights_at(config, update) == pytest.approx(
            {"step_penalty": 1.0, "death_penalty": 0.3, "distance_shaping": 1.0, "kills": 2.0}
        )
    vector = reward_weight_vector(reward_weights_at(config, 99), NAMES)
    assert vector[NAMES.index("death_penalty")] == np.float32(0.3)


def test_without_the_flag_the_weights_hold_for_the_whole_run():
    config = annealed_config(None)
    assert reward_weights_at(config, 0) == reward_weights_at(config, 99) == WEIGHTS
    assert reward_anneal_progress(config, 99) == 0.0
    assert reward_weights_at(annealed_config(None, weights=None), 5) is None


def test_weight_vector_is_in_canonical_order_with_ones_for_the_rest():
    vector = reward_weight_vector(WEIGHTS, NAMES)
    assert vector.dtype == np.float32 and vector.shape == (len(NAMES),)
    for i, name in enumerate(NAMES):
        assert vector[i] == np.float32(WEIGHTS.get(name, 1.0))


@pytest.mark.parametrize(
    "weights, anneal, message",
    [
        (None, 0.5, "needs --reward-weights"),
        (WEIGHTS, 0.0, r"in \(0, 1\]"),
        (WEIGHTS, 1.5, r"in \(0, 1\]"),
        (WEIGHTS, float("nan"), r"in \(0, 1\]"),
    ],
)
def test_bad_settings_are_refused(weights, anneal, message):
    with pytest.raises(ValueError, match=message):
        annealed_config(anneal, weights=weights)


def test_final_weights_need_the_schedule():
    with pytest.raises(ValueError, match="needs --reward-weights-anneal"):
        annealed_config(None, final={"kills": 2.0})
    with pytest.raises(ValueError, match="needs --reward-weights"):
        annealed_config(0.5, weights=None, final={"kills": 2.0})


def test_bad_final_weights_name_their_flag(capsys):
    parse = cfg.build_parser().parse_args
    with pytest.raises(SystemExit):
        parse(["--reward-weights-final", "kills"])
    assert "--reward-weights-final: expected name=weight" in capsys.readouterr().err
    with pytest.raises(ValueError, match="--reward-weights-final: unknown reward component"):
        cfg.check_reward_weight_names({"kill": 1.0}, NAMES, "--reward-weights-final")


def test_flag_parses_and_defaults_to_off():
    parse = cfg.build_parser().parse_args
    assert cfg.config_from_args(parse([])).reward_weights_anneal is None
    args = parse(["--reward-weights", "kills=2", "--reward-weights-anneal", "0.8"])
    assert cfg.config_from_args(args).reward_weights_anneal == 0.8
    assert cfg.config_from_args(args).reward_weights_final is None
    args = parse(["--reward-weights-final", "siphon_death_penalty=0.3, kills=2"])
    assert cfg.config_from_args(args).reward_weights_final == {
        "siphon_death_penalty": 0.3,
        "kills": 2.0,
    }


# ------------------------------------------------------------------ the chunk


def first_update(vector):
    config = annealed_config(None, num_updates=4)
    config.log_interval, config.hidden_dim = 1, 32
    trainer = make_train(config, standin_env)
    runner = trainer.init(jax.random.PRNGKey(3))
    inputs = {} if vector is None else {"weights": np.asarray(vector)[None]}  # 1 update
    _, per_update = trainer.train_chunk(runner, 1, inputs)
    return aggregate_chunk(jax.device_get(per_update), 1)


def test_traced_weights_replace_the_fixed_ones():
    fixed = first_update(None)
    same = first_update(reward_weight_vector(WEIGHTS, NAMES))
    canonical = first_update(np.ones(len(NAMES), np.float32))
    # The given weights as a traced vector train exactly as the baked-in ones.
    assert same["train/weighted_mean_reward"] == fixed["train/weighted_mean_reward"]
    assert same["train/total_loss"] == fixed["train/total_loss"]
    # Weights of 1 give back the env's own reward; the rollout is the same game.
    assert canonical["train/mean_reward"] == fixed["train/mean_reward"]
    assert canonical["train/weighted_mean_reward"] == pytest.approx(
        canonical["train/mean_reward"], abs=1e-6
    )
    assert fixed["train/weighted_mean_reward"] != pytest.approx(
        fixed["train/mean_reward"], abs=1e-4
    )


# ------------------------------------------------------------------ a real run


def test_a_run_logs_the_progress_of_the_schedule(tmp_path, capsys):
    records = standin_run(
        tmp_path,
        "anneal",
        8,
        "--reward-weights",
        "step_penalty=0",
        "--reward-weights-anneal",
        "0.5",
        "--reward-weights-final",
        "step_penalty=0.5",
    )
    out = capsys.readouterr().out
    assert "reward_weights_anneal" in out and "step_penalty=0.5" in out
    progress = [r["train/reward_weights_progress"] for r in records if "train/total_loss" in r]
    # 8 updates in chunks of 2, canonical from update 4: each update moves a quarter of the
    # way (0, 0.25, ..., 1), each chunk logs the mean of its two.
    assert progress == [0.125, 0.625, 1.0, 1.0]
    stored = stored_config(tmp_path / "anneal" / "final_params.npz")
    assert stored["reward_weights_final"] == {"step_penalty": 0.5}
