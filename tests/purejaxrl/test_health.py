"""Health checks (training.md §3.7): each fires on a synthetic series that shows its
problem, stays quiet on a healthy one, and fires once per episode of trouble. Also the
rollout metrics the checks read (valid fractions, mean final stage)."""

import math

import jax
import numpy as np
import pytest
import standin_env

from hackmatrix.purejaxrl import health
from hackmatrix.purejaxrl.config import TrainConfig
from hackmatrix.purejaxrl.health import HealthMonitor
from hackmatrix.purejaxrl.metrics import MetricsLogger, aggregate_chunk, read_metrics_file
from hackmatrix.purejaxrl.train import make_train


def healthy(i: int) -> dict:
    """Chunk i of a run that learns: return and length rise together."""
    return {
        "train/approx_kl": 0.02,
        "train/clip_frac": 0.1,
        "train/entropy": 0.8 - 0.005 * i,
        "train/mean_episode_return": -3.0 + 0.5 * i,
        "train/mean_episode_length": 40.0 + 2.0 * i,
        "actions/siphon_frac": 0.015,
        "actions/siphon_valid_frac": 0.05,
        "actions/program_frac": 0.004,
        "actions/program_valid_frac": 0.01,
        "reward/step_penalty": -0.01,
        "stats/empty_mask_steps": 0.0,
    }


def run(series) -> list:
    monitor = HealthMonitor()
    fired = []
    for i, metrics in enumerate(series):
        fired += monitor.observe((i + 1) * 10, metrics)
    return fired


def with_changes(n, change):
    """n healthy chunks with `change(i, metrics)` applied to each."""
    out = []
    for i in range(n):
        metrics = healthy(i)
        change(i, metrics)
        out.append(metrics)
    return out


def test_a_healthy_run_raises_no_warning():
    assert run([healthy(i) for i in range(40)]) == []


def _kl(i, m):
    m["train/approx_kl"] = 0.12 if 5 <= i < 12 else 0.02


def _clip(i, m):
    m["train/clip_frac"] = 0.45 if 5 <= i < 12 else 0.1


def _entropy_collapse(i, m):
    m["train/entropy"] = max(0.8 - 0.1 * i, 0.02)


def _entropy_high(i, m):
    m["train/entropy"] = 2.8


def _oscillation(i, m):
    m["train/mean_episode_length"] = 40.0 + 5.0 * i  # getting longer...
    m["train/mean_episode_return"] = -3.0 + 0.05 * math.sin(i)  # ...for nothing


def _siphon(i, m):  # the known failure: 0.015 -> 0.0001 while still valid
    m["actions/siphon_frac"] = max(0.015 * 0.5**i, 1e-4)


def _hoarding(i, m):  # more and more siphons held beside blocks, the same few taken
    m["actions/siphon_valid_frac"] = 0.04 + 0.005 * i
    m["actions/siphon_frac"] = 0.012


def _program(i, m):
    m["actions/program_frac"] = 0.004 if i < 4 else 0.0


def _step_penalty(i, m):
    m["reward/step_penalty"] = -0.02


def _empty_mask(i, m):
    m["stats/empty_mask_steps"] = 3.0 if i >= 2 else 0.0


@pytest.mark.parametrize(
    "change, check, metric",
    [
        (_kl, "approx_kl_high", "train/approx_kl"),
        (_clip, "clip_frac_high", "train/clip_frac"),
        (_entropy_collapse, "entropy_collapse", "train/entropy"),
        (_entropy_high, "entropy_high", "train/entropy"),
        (_oscillation, "length_up_return_flat", "train/mean_episode_length"),
        (_siphon, "siphon_collapse", "actions/siphon_frac"),
        (_hoarding, "siphon_hoarding", "actions/siphon_valid_frac"),
        (_program, "program_collapse", "actions/program_frac"),
        (_step_penalty, "step_penalty_off", "reward/step_penalty"),
        (_empty_mask, "empty_mask", "stats/empty_mask_steps"),
    ],
)
def test_each_check_fires_once_on_its_problem(change, check, metric):
    fired = run(with_changes(30, change))
    assert [w.check for w in fired] == [check]
    warning = fired[0]
    assert warning.metric == metric
    text = warning.text()
    assert metric in text and "healthy:" in text and "Remedy:" in text and warning.remedy in text
    assert not math.isnan(warning.value)


def test_kl_warning_rearms_only_after_the_metric_is_healthy_again():
    kl = [0.02, 0.09, 0.12, 0.07, 0.09, 0.05, 0.05, 0.10, 0.11]
    #           fire        gap   (still one episode)  clear      fire again
    series = [dict(healthy(i), **{"train/approx_kl": v}) for i, v in enumerate(kl)]
    fired = run(series)
    assert [(w.check, w.update) for w in fired] == [("approx_kl_high", 20), ("approx_kl_high", 80)]
    assert fired[0].value == pytest.approx(0.09)


def test_high_entropy_needs_a_long_stretch():
    short = with_changes(health.ENTROPY_HIGH_CHUNKS - 1, _entropy_high)
    assert run(short) == []
    fired = run(with_changes(health.ENTROPY_HIGH_CHUNKS, _entropy_high))
    assert [w.update for w in fired] == [health.ENTROPY_HIGH_CHUNKS * 10]


def test_a_rarely_valid_action_is_not_judged():
    def never_valid(i, m):
        m["actions/program_frac"] = 0.0
        m["actions/program_valid_frac"] = health.ACTION_VALID_MIN / 2

    assert run(with_changes(20, never_valid)) == []


def test_siphon_warning_names_taken_and_valid_shares():
    (warning,) = run(with_changes(12, _siphon))
    assert "of steps where it was valid" in warning.detail
    assert warning.value / 0.05 < health.ACTION_USE_COLLAPSE_BELOW  # taken / valid


def test_missing_and_nan_metrics_are_never_a_problem():
    sparse = [{"train/mean_episode_return": math.nan, "train/mean_episode_length": math.nan}] * 15
    assert run(sparse) == []
    assert run([{}] * 5) == []


def test_priming_with_history_does_not_warn_but_later_problems_do():
    monitor = HealthMonitor()
    monitor.prime(with_changes(10, _kl))  # old trouble, already reported before
    assert monitor.active == set()
    fired = monitor.observe(200, dict(healthy(10), **{"train/approx_kl": 0.2}))
    assert [w.check for w in fired] == ["approx_kl_high"]


def test_warning_json_is_plain():
    (warning,) = run(with_changes(8, _kl))
    record = warning.to_json()
    assert set(record) == {"check", "metric", "value", "healthy", "remedy", "update", "detail"}
    assert record["check"] == "approx_kl_high" and record["update"] == 60


# ----------------------------------------------------- rollout metrics behind the checks
def _recording_game(seen):
    """The stand-in game, with program 7 also valid on odd rows (so both valid fractions
    move; the trainer samples from the mask, the game ignores the program), that sends
    every mask it hands out and every step's done and stage to the host."""

    def action_mask(state):
        mask = standin_env.action_mask(state).at[7].set(state.pos[0] % 2 == 1)
        jax.debug.callback(lambda m: seen["mask"].append(np.asarray(m).reshape(-1, 28)), mask)
        return mask

    def step(key, state, action, params):
        out = standin_env.step(key, state, action, params)
        jax.debug.callback(
            lambda d, s: seen["end"].append((np.ravel(d), np.ravel(s))), out[3], out[4]["stage"]
        )
        return out

    return standin_env.variant(action_mask=action_mask, step=step)


def test_valid_fractions_and_final_stage_match_a_numpy_count_over_the_rollout():
    seen = {"mask": [], "end": []}
    config = TrainConfig(
        num_envs=8, num_steps=32, hidden_dim=16, log_interval=1, num_minibatches=2, update_epochs=1
    )
    trainer = make_train(config, _recording_game(seen))
    runner = trainer.init(jax.random.PRNGKey(3))
    _, per_update = trainer.train_chunk(runner, 1)
    metrics = aggregate_chunk(jax.device_get(per_update), 1)
    jax.effects_barrier()
    mask = np.concatenate(seen["mask"])
    done = np.concatenate([d for d, _ in seen["end"]])
    stage = np.concatenate([s for _, s in seen["end"]])
    steps = config.num_envs * config.num_steps
    assert mask.shape == (steps, 28) and done.shape == (steps,)
    assert 0 < mask[:, 4].sum() < steps and 0 < mask[:, 7].sum() < steps
    assert metrics["actions/siphon_valid_frac"] == pytest.approx(mask[:, 4].sum() / steps)
    assert metrics["actions/program_valid_frac"] == pytest.approx(mask[:, 5:].any(-1).sum() / steps)
    assert done.sum() == metrics["train/num_episodes"] > 0
    assert metrics["stats/mean_final_stage"] == pytest.approx(stage[done].mean())
    assert "final_stage_sum" not in metrics


# ------------------------------------------------------------------ where warnings go
def test_warnings_go_to_metrics_jsonl_and_only_to_an_online_wandb(tmp_path):
    (warning,) = run(with_changes(8, _kl))
    logger = MetricsLogger(tmp_path, False, project="p", entity=None, run_name="r", config={})
    logger.log(60, {"train/approx_kl": 0.12}, {"health/warnings": [warning.to_json()]})
    logger.log(70, {"train/approx_kl": 0.12})
    first, second = read_metrics_file(tmp_path / "metrics.jsonl")
    assert (
        first["health/warnings"][0]["check"] == "approx_kl_high"
        and first["train/approx_kl"] == 0.12
    )
    assert "health/warnings" not in second

    class FakeRun:
        offline = False
        alerts = []

        def alert(self, **kwargs):
            self.alerts.append(kwargs)

    logger.alert("ignored: no W&B run", "text")
    logger.run = FakeRun()
    logger.alert("HackMatrix r: approx_kl_high", warning.text())
    logger.run.offline = True
    logger.alert("not sent offline", "text")
    assert FakeRun.alerts == [
        {"title": "HackMatrix r: approx_kl_high", "text": warning.text(), "level": "WARN"}
    ]
    logger.run = None


def siphon_series(points):
    """Healthy chunks with (siphon valid %, % of those taken) from a real run's log."""
    return [
        dict(
            healthy(i),
            **{
                "actions/siphon_valid_frac": valid / 100,
                "actions/siphon_frac": valid / 100 * use / 100,
            },
        )
        for i, (valid, use) in enumerate(points)
    ]


def test_hoarding_warns_before_the_collapse_of_a_real_run():
    # specs/experiments/18-siphon-fork.md §18.3, seed 3 with the program levers from the
    # start, updates 10-120.
    points = [(3.9, 37), (3.7, 37), (4.8, 27), (4.4, 30), (4.9, 30), (6.2, 28), (7.9, 23)]
    points += [(12.1, 16), (20.0, 9), (30.7, 5), (45.0, 3), (55.6, 2), (60.0, 0.5)]
    fired = run(siphon_series(points))
    assert [(w.check, w.update) for w in fired] == [
        ("siphon_hoarding", 70),
        ("siphon_collapse", 130),
    ]
    assert "7.9% of steps and taken on 23%" in fired[0].text()


def test_a_run_that_keeps_siphoning_is_not_called_hoarding():
    # Seed 0, siphon weight 0.3 + program bonus 1, 25 M steps: the valid share creeps up
    # late (6.1 % at update 745) but a third of those siphons are still taken.
    points = [(4.4, 31), (2.9, 45), (2.4, 56), (2.2, 73), (2.4, 97), (2.7, 85), (6.1, 35)]
    assert run(siphon_series(points)) == []
