"""The search's command-line flags: what they set, and clear errors (specs/search.md §6)."""

import pytest

from hackmatrix.commands import evaluate, play, watch_jax
from hackmatrix.commands.options import search_options


def test_evaluate_takes_one_or_more_simulation_counts():
    args = evaluate.parse_args(["p.npz", "--search", "8", "64", "--search-roots", "2"])
    assert args.search == [8, 64]
    assert search_options(args) == {
        "num_roots": 2,
        "max_num_considered_actions": 16,
        "undo_cap": None,
        "tree_reward": "env",  # the game's reward unless asked (specs/search.md §6)
        "c_scale": 0.1,  # SearchConfig's (mctx's) default
        "worlds": 1,  # one sampled state per tree (specs/search.md §3.5)
        "leaf_rollout": 0,  # the value alone at a leaf (§3.6)
    }
    trained = evaluate.parse_args(["p.npz", "--search", "8", "--search-tree-reward", "trained"])
    assert search_options(trained)["tree_reward"] == "trained"
    gentler = evaluate.parse_args(["p.npz", "--search", "8", "--search-c-scale", "0.03"])
    assert search_options(gentler)["c_scale"] == 0.03
    several = evaluate.parse_args(["p.npz", "--search", "8", "--search-worlds", "4"])
    assert search_options(several)["worlds"] == 4
    rolled = evaluate.parse_args(["p.npz", "--search", "8", "--search-leaf-rollout", "4"])
    assert search_options(rolled)["leaf_rollout"] == 4
    assert evaluate.parse_args(["p.npz"]).search is None


def test_watch_and_play_take_one():
    assert watch_jax.parse_args(["p.npz", "--search", "16"]).search == 16
    args = play.parse_args(["--hint", "p.npz"])
    assert args.hint == "p.npz" and args.hint_search == 16
    assert play.parse_args(["--hint", "p.npz", "--hint-search", "4"]).hint_search == 4


@pytest.mark.parametrize(
    "parse, argv, message",
    [
        (evaluate.parse_args, ["p.npz", "--search", "0"], "--search"),
        (evaluate.parse_args, ["p.npz", "--search", "4", "--search-considered", "29"], "1..28"),
        (evaluate.parse_args, ["--reports", "a.json", "--search", "4"], "play nothing"),
        (watch_jax.parse_args, ["p.npz", "--search", "4", "--search-roots", "0"], "roots"),
        (play.parse_args, ["--hint", "p.npz", "--hint-search", "0"], "--hint-search"),
        (play.parse_args, ["--search-undo-cap", "-1"], "undo-cap"),
        (evaluate.parse_args, ["p.npz", "--search-tree-reward", "x"], "tree-reward"),
        (evaluate.parse_args, ["p.npz", "--search", "4", "--search-c-scale", "0"], "c-scale"),
        (watch_jax.parse_args, ["p.npz", "--search-c-scale", "nan"], "c-scale"),
        (evaluate.parse_args, ["p.npz", "--search", "4", "--search-worlds", "0"], "worlds"),
        (
            evaluate.parse_args,
            ["p.npz", "--search", "4", "--search-worlds", "2", "--search-tree-reward", "trained"],
            "--search-worlds above 1",
        ),
        (evaluate.parse_args, ["p.npz", "--search", "4", "--search-leaf-rollout", "-1"], ">= 0"),
        (
            watch_jax.parse_args,
            ["p.npz", "--search", "4", "--search-leaf-rollout", "2", "--search-worlds", "2"],
            "--search-worlds 1",
        ),
    ],
)
def test_bad_search_flags_are_clear_errors(parse, argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        parse(argv)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err
