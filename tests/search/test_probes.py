"""The search's diagnostics (hackmatrix/commands/search_probes.py): the unfair root reaches
only the evaluation it wraps, the label tally's shares, and clear errors."""

import numpy as np
import pytest

from hackmatrix.commands import evaluate, search_probes


def test_unfair_root_sets_reseed_inside_and_restores_the_fair_search(monkeypatch):
    seen = []

    def fake_main(argv):
        seen.append(evaluate.search_options(evaluate.parse_args(argv)))
        return 0

    monkeypatch.setattr(evaluate, "main", fake_main)
    assert search_probes.main(["unfair-root", "p.npz", "--search", "4"]) == 0
    assert seen[0]["root"] == "reseed"
    assert "root" not in evaluate.search_options(evaluate.parse_args(["p.npz", "--search", "4"]))


def test_unfair_root_needs_a_search_and_a_subcommand_is_required(capsys):
    assert search_probes.main(["unfair-root", "p.npz"]) == 2
    assert "give --search N" in capsys.readouterr().err
    assert search_probes.main(["evaluate"]) == 2
    assert "usage: search_probes.py" in capsys.readouterr().err


def test_tally_counts_agreement_where_the_network_siphons():
    shares = search_probes.tally([1, 1, 1, 0, 0], [1, 0, 0, 1, 0])
    assert shares["states"] == 5
    assert shares["network_siphons"] == pytest.approx(0.6)
    assert shares["search_siphons"] == pytest.approx(0.4)
    assert shares["search_agrees_where_network_siphons"] == pytest.approx(1 / 3)
    assert shares["search_siphons_where_network_does_not"] == pytest.approx(0.5)


@pytest.mark.parametrize(
    "argv, message",
    [(["--games", "0"], "--games must be at least 1"), (["--search-tree-reward", "x"], "choice")],
)
def test_bad_label_flags_are_clear_errors(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        search_probes.parse_label_args(argv)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def test_gap_table_reads_each_threshold_over_the_states_at_or_above_it():
    rows = search_probes.gap_table(
        gaps=[0.0, 0.1, 0.3, 1.5],
        stage_gains=[-1, 0, 1, 2],
        search_siphons=[1, 0, 0, 1],
        network_siphons=[0, 1, 1, 0],
        thresholds=(0.0, 0.25, 1.0, 3.0),
    )
    assert [row["states"] for row in rows] == [4, 2, 1, 0]
    assert rows[0]["stage_gain"] == pytest.approx(0.5)
    assert rows[1]["stage_gain"] == pytest.approx(1.5)
    assert rows[1]["stage_gain_se"] == pytest.approx(0.5)  # std 0.707 / sqrt 2
    assert rows[0]["search_siphons"] == pytest.approx(0.5)
    assert rows[0]["network_siphons"] == pytest.approx(0.5)
    # Where the network siphons: gains 0 and 1 over all, the single 1 at gaps >= 0.25.
    assert [row["not_now_states"] for row in rows] == [2, 1, 0, 0]
    assert rows[0]["not_now_gain"] == pytest.approx(0.5)
    assert rows[1]["not_now_gain"] == pytest.approx(1.0) and np.isnan(rows[1]["not_now_gain_se"])
    assert np.isnan(rows[2]["stage_gain_se"]) and np.isnan(rows[3]["stage_gain"])


def test_q_gaps_takes_a_horizon_and_checks_it(capsys):
    assert search_probes.parse_label_args(["--horizon", "5"], search_probes.GAPS).horizon == 5
    with pytest.raises(SystemExit):
        search_probes.parse_label_args(["--horizon", "0"], search_probes.GAPS)
    assert "--horizon must be at least 1" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # the siphon tally has no horizon
        search_probes.parse_label_args(["--horizon", "5"])


def test_search_reach_is_the_largest_sigma_q_separation():
    assert search_probes.search_reach(16, 0.1) == pytest.approx(6.6)
    assert search_probes.search_reach(64, 0.03) == pytest.approx(3.42)


def test_prior_shape_reads_only_the_legal_actions_of_states_with_a_choice():
    from hackmatrix.jax_env.constants import NUM_ACTIONS, SIPHON_ACTION

    logits = np.zeros((3, NUM_ACTIONS))
    mask = np.zeros((3, NUM_ACTIONS), bool)
    # Row 0: two legal actions with equal logits (an illegal one far higher is ignored).
    mask[0, [0, 1]] = True
    logits[0, 2] = 100.0
    # Row 1: SIPHON legal beside a move, 8 logits behind it.
    mask[1, [0, SIPHON_ACTION]] = True
    logits[1, 0] = 8.0
    # Row 2: a single legal action: no choice, not counted.
    mask[2, 3] = True
    shape = search_probes.prior_shape(logits, mask, mask[:, SIPHON_ACTION], reach=6.6)
    assert shape["states"] == 2
    p_siphon = 1 / (1 + np.exp(8.0))
    assert shape["entropy"] == pytest.approx(
        (np.log(2) - p_siphon * np.log(p_siphon) - (1 - p_siphon) * np.log(1 - p_siphon)) / 2
    )
    assert shape["top_probability"] == pytest.approx((0.5 + 1 - p_siphon) / 2)
    assert shape["logit_gap_median"] == pytest.approx(4.0)
    assert shape["beyond_reach"] == pytest.approx(0.5)
    assert shape["siphon_states"] == 1
    assert shape["siphon_probability"] == pytest.approx(p_siphon)


def test_prior_shape_flags_are_checked(capsys):
    with pytest.raises(SystemExit):
        search_probes.parse_shape_args([])
    with pytest.raises(SystemExit):
        search_probes.parse_shape_args(["p.npz", "--c-scale", "0"])
    assert "--c-scale must be > 0" in capsys.readouterr().err
    assert search_probes.parse_shape_args(["a.npz", "b.npz"]).policies == ["a.npz", "b.npz"]


def test_value_calibration_flags_are_checked(capsys):
    args = search_probes.parse_value_args([])
    assert (args.policy, args.games, args.steps, args.policy_mode) == (
        "pretrained",
        128,
        1000,
        "greedy",
    )
    for argv, message in [
        (["--games", "0"], "--games must be at least 1"),
        (["--steps", "-3"], "--steps must be at least 1"),
        (["--policy-mode", "argmax"], "choice"),
    ]:
        with pytest.raises(SystemExit) as exit_:
            search_probes.parse_value_args(argv)
        assert exit_.value.code == 2
        assert message in capsys.readouterr().err


def test_value_calibration_plays_the_shipped_policy_and_keeps_only_finished_games(tmp_path):
    """Games 0..2 greedy with the shipped policy, at most 400 moves: the trained reward (the
    staged reward it learned) is not the game's own, so both tables are printed; the rows
    count only live steps of finished games, stage by stage; the JSON holds them."""
    import json

    out = tmp_path / "v.json"
    argv = ["value-calibration", "--games", "3", "--steps", "400", "--json", str(out)]
    assert search_probes.main(argv) == 0
    found = json.loads(out.read_text())
    assert (found["games"], found["policy_mode"], found["gamma"]) == (3, "greedy", 0.99)
    assert set(found["tables"]) == {"trained", "env"}
    assert found["finished_games"] >= 1  # the shipped policy's games end in ~150 moves
    assert 0 <= found["won_games"] <= found["finished_games"]
    for rows in found["tables"].values():
        assert [row["stage"] for row in rows] == list(range(9))
        kept = rows[0]["steps"]
        assert 0 < kept <= 400 * found["finished_games"]
        assert kept == sum(row["steps"] for row in rows[1:])
        assert rows[1]["steps"] > 0 and np.isfinite(rows[1]["rmse"])
    trained, env = (found["tables"][name][0] for name in ("trained", "env"))
    assert trained["value"] == env["value"]  # one value, read against two returns
    assert trained["return"] != env["return"]
