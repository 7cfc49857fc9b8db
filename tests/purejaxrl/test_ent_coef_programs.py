"""`--ent-coef-programs C` (training.md §1.1): an entropy bonus on the two-way choice "run a
program or not", on the steps where both are valid.

The two-way entropy itself, the term it adds to the loss, the flag's checks, the program
levers' switch that delays it, and a real run that logs it.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import schedule_config, standin_run, standin_whose_programs_spend

from hackmatrix.names import FIRST_PROGRAM_ACTION
from hackmatrix.purejaxrl import config as cfg
from hackmatrix.purejaxrl import distribution
from hackmatrix.purejaxrl.checkpoint import stored_config
from hackmatrix.purejaxrl.metrics import aggregate_chunk
from hackmatrix.purejaxrl.train import OBS_SIZE, PROGRAM_ACTIONS, LossInputs, make_train

A = PROGRAM_ACTIONS.size


def two_way(p):
    return -(p * np.log(p) + (1 - p) * np.log(1 - p))


# ------------------------------------------------------------ the two-way entropy


def test_program_actions_are_the_actions_from_the_first_program_on():
    assert A == 28 and PROGRAM_ACTIONS.sum() == 23
    assert not PROGRAM_ACTIONS[:FIRST_PROGRAM_ACTION].any()


def test_entropy_of_the_program_mass_against_the_rest():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(4, A)).astype(np.float32)
    mask = np.zeros((4, A), bool)
    mask[:, [0, 2, 4]] = True  # moves and siphon
    mask[:, [5, 9, 20]] = True  # three programs
    masked = np.where(mask, logits, -np.inf)
    p = np.exp(masked - masked.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    q = p[:, PROGRAM_ACTIONS].sum(1)
    got = distribution.group_entropy(jnp.asarray(logits), jnp.asarray(mask), PROGRAM_ACTIONS)
    np.testing.assert_allclose(got, two_way(q), rtol=1e-5)
    # An even split is the most a two-way choice holds: ln 2.
    even = np.zeros((1, A), np.float32)
    one_each = np.zeros((1, A), bool)
    one_each[0, [1, 7]] = True
    h = distribution.group_entropy(jnp.asarray(even), jnp.asarray(one_each), PROGRAM_ACTIONS)
    assert float(h[0]) == pytest.approx(np.log(2), rel=1e-6)


@pytest.mark.parametrize("valid", [[0, 1, 4], [5, 6, 27]], ids=["no program", "only programs"])
def test_no_choice_means_no_entropy_and_a_finite_gradient(valid):
    mask = np.zeros((1, A), bool)
    mask[0, valid] = True
    logits = jnp.asarray(np.random.default_rng(1).normal(size=(1, A)).astype(np.float32))

    def h(lg):
        return distribution.group_entropy(lg, jnp.asarray(mask), PROGRAM_ACTIONS).sum()

    assert float(h(logits)) == 0.0
    grad = jax.grad(h)(logits)
    assert np.all(np.isfinite(grad)) and not np.any(grad)


def test_its_gradient_pulls_the_program_mass_toward_an_even_split():
    mask = np.zeros((1, A), bool)
    mask[0, [0, 1, 2, 3, 10]] = True  # four moves and one program: q = 1/5 at equal logits
    logits = jnp.zeros((1, A))
    grad = jax.grad(
        lambda lg: distribution.group_entropy(lg, jnp.asarray(mask), PROGRAM_ACTIONS).sum()
    )(logits)
    assert grad[0, 10] > 0 and np.all(np.asarray(grad[0, :4]) < 0)


# ------------------------------------------------------------------ the loss


def loss_parts(trainer, ent_coef_programs):
    """The loss of one synthetic minibatch: half its steps offer a program beside moves."""
    rng = np.random.default_rng(2)
    n = 64
    mask = np.zeros((n, A), bool)
    mask[:, :4] = True
    mask[: n // 2, FIRST_PROGRAM_ACTION + 3] = True
    inputs = LossInputs(
        obs=jnp.asarray(rng.normal(size=(n, OBS_SIZE)).astype(np.float32)),
        mask=jnp.asarray(mask),
        action=jnp.zeros(n, jnp.int32),
        log_prob=jnp.full(n, -1.4, jnp.float32),
    )
    batch = (inputs, jnp.asarray(rng.normal(size=n), jnp.float32), jnp.zeros(n, jnp.float32))
    params = trainer.init(jax.random.PRNGKey(0)).train_state.params
    coef = None if ent_coef_programs is None else jnp.float32(ent_coef_programs)
    total, metrics = trainer.phases["loss_fn"](params, batch, None, coef)
    logits, _ = trainer.network.apply(params, inputs.obs)
    h = distribution.group_entropy(logits, inputs.mask, PROGRAM_ACTIONS)
    return float(total), metrics, np.asarray(h)


@pytest.fixture(scope="module")
def loss_trainer():
    import standin_env

    config = schedule_config(4, hidden_dim=32, log_interval=1)
    return make_train(config, standin_env)


def test_the_term_is_minus_c_times_the_mean_two_way_entropy(loss_trainer):
    off, off_metrics, h = loss_parts(loss_trainer, None)
    on, on_metrics, _ = loss_parts(loss_trainer, 0.5)
    assert h[:32].min() > 0 and not h[32:].any()  # the choice exists on the first half only
    assert on == pytest.approx(off - 0.5 * h.mean(), abs=1e-5)
    # Logged over the steps with the choice, on the 0..ln 2 scale, with their share.
    assert float(on_metrics["train/program_choice_entropy"]) == pytest.approx(h[:32].mean())
    assert float(on_metrics["train/program_choice_steps"]) == pytest.approx(0.5)
    assert "train/program_choice_entropy" not in off_metrics
    assert loss_parts(loss_trainer, 0.0)[0] == pytest.approx(off, abs=1e-6)


# ------------------------------------------------------------------ the flag


def test_flag_parses_and_defaults_to_off():
    parse = cfg.build_parser().parse_args
    assert cfg.config_from_args(parse([])).ent_coef_programs == 0.0
    assert cfg.config_from_args(parse(["--ent-coef-programs", "0.3"])).ent_coef_programs == 0.3


@pytest.mark.parametrize("value", [-0.1, float("nan"), float("inf")])
def test_bad_coefficients_are_refused(value):
    with pytest.raises(ValueError, match="--ent-coef-programs must be a finite number >= 0"):
        schedule_config(100, ent_coef_programs=value)


def test_it_is_a_program_lever_the_delay_can_hold_back():
    config = schedule_config(100, ent_coef_programs=0.2, program_levers_from_update=40)
    assert config.program_levers_from_update == 40
    with pytest.raises(ValueError, match="--ent-coef-programs"):
        schedule_config(100, program_levers_from_update=40)


# ------------------------------------------------------------------ the chunk


def spending_trainer(ent_coef_programs):
    config = schedule_config(4, ent_coef_programs=ent_coef_programs)
    config.log_interval, config.hidden_dim = 1, 32
    return make_train(config, standin_whose_programs_spend())


def first_update(trainer, program_levers=None):
    runner = trainer.init(jax.random.PRNGKey(3))
    inputs = {}
    if program_levers is not None:  # one row: the chunk of this config has 1 update
        inputs["program_levers"] = np.asarray([program_levers], np.float32)
    runner, per_update = trainer.train_chunk(runner, 1, inputs)
    params = jax.tree_util.tree_leaves(jax.device_get(runner.train_state.params))
    return aggregate_chunk(jax.device_get(per_update), 1), params


def test_the_levers_switch_holds_the_term_back_until_its_update():
    _, plain = first_update(spending_trainer(0.0))
    with_term = spending_trainer(0.5)  # the switch is traced: one compile for both
    before, held = first_update(with_term, program_levers=0.0)
    after, paid = first_update(with_term, program_levers=1.0)
    for a, b in zip(plain, held, strict=True):  # switched off: the update of a plain run
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    assert any(not np.allclose(a, b) for a, b in zip(plain, paid, strict=True))
    # The rollout is the same game either way; the entropy is logged while held back too.
    assert before["train/mean_reward"] == after["train/mean_reward"]
    assert 0 < before["train/program_choice_entropy"] <= np.log(2) + 1e-6
    assert before["train/program_choice_steps"] == pytest.approx(1.0)  # WAIT/UNDO always valid


# ------------------------------------------------------------------ a real run


def test_a_run_logs_the_choice_entropy_and_stores_the_coefficient(tmp_path, capsys):
    records = standin_run(tmp_path, "progent", 2, "--ent-coef-programs", "0.25")
    assert "ent_coef_programs" in capsys.readouterr().out
    logged = [r for r in records if "train/total_loss" in r]
    assert logged and all("train/program_choice_entropy" in r for r in logged)
    assert stored_config(tmp_path / "progent" / "final_params.npz")["ent_coef_programs"] == 0.25
    plain = standin_run(tmp_path, "plain", 2)
    assert not any("train/program_choice_entropy" in r for r in plain)


def test_a_resume_keeps_the_coefficient_and_its_delay(tmp_path, capsys):
    from test_program_levers_delay import resume_standin

    # The term is the run's only program lever: a resume that dropped it would leave the
    # stored delay with nothing to delay.
    standin_run(
        tmp_path, "held", 2, "--ent-coef-programs", "0.25", "--program-levers-from-update", "3"
    )
    capsys.readouterr()
    records = resume_standin(tmp_path / "held" / "checkpoint_2.pkl", 4)
    assert "continuing the checkpoint's ent_coef_programs=0.25" in capsys.readouterr().out
    stored = stored_config(tmp_path / "held" / "final_params.npz")
    assert (stored["ent_coef_programs"], stored["program_levers_from_update"]) == (0.25, 3)
    # The resumed chunk holds updates 2 (held back) and 3 (on): half its updates are on.
    assert [r["train/program_levers"] for r in records if "train/total_loss" in r][-1] == 0.5
