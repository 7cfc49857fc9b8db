"""`--network mlp|grid` (training.md §2.3): the default is unchanged, the grid network is
built, recognised from its parameters, trained, saved and loaded by every loader."""

import hashlib
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import TINY_BATCH, TINY_FLAGS, subprocess_env

from hackmatrix.purejaxrl import cli
from hackmatrix.purejaxrl.network import (
    NETWORKS,
    OBS_SIZE,
    ActorCritic,
    GridActorCritic,
    describe_network,
    make_network,
    network_config_from_params,
    network_for_params,
    network_from_config,
    player_plane,
)

# sha256 over (key path, float32 bytes) of make_network(32, 2).init(PRNGKey(0)), taken with the
# network.py from before `--network` existed: the default network must stay bit for bit the same.
MLP_32x2_DIGEST = "c1144ed3e4fc27edd390717d1961b7c20279c31f355ff87426fd440a955a6e99"


def digest(params) -> str:
    h = hashlib.sha256()
    leaves = jax.tree_util.tree_flatten_with_path(params)[0]
    for path, leaf in sorted(leaves, key=lambda item: jax.tree_util.keystr(item[0])):
        h.update(jax.tree_util.keystr(path).encode())
        h.update(np.asarray(leaf, np.float32).tobytes())
    return h.hexdigest()


def init(network, key=0):
    return network.init(jax.random.PRNGKey(key), jnp.zeros((1, OBS_SIZE), jnp.float32))


# ------------------------------------------------------------------- building


# The digests in a fresh process compiled with XLA's optimizations on, as a user's run is:
# test.sh turns most of them off to compile faster, which moves the last bit of a few
# initial weights (the orthogonal init's arithmetic is fused differently).
OPTIMIZED_DIGESTS = """
import sys
sys.path.insert(0, sys.argv[1])
from test_networks import digest, init
from hackmatrix.purejaxrl.network import make_network, network_from_config
print(digest(init(make_network(32, 2))))
print(digest(init(network_from_config({"hidden_dim": 32, "num_layers": 2}))))
"""


def test_default_mlp_params_are_unchanged():
    params = init(make_network(32, 2))
    assert sorted(params["params"]) == ["Dense_0", "Dense_1", "Dense_2", "Dense_3"]
    assert isinstance(make_network(32, 2, network="mlp"), ActorCritic)
    env = subprocess_env(JAX_DISABLE_MOST_OPTIMIZATIONS="0")
    here = str(Path(__file__).resolve().parent)
    done = subprocess.run(
        [sys.executable, "-c", OPTIMIZED_DIGESTS, here],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == [MLP_32x2_DIGEST, MLP_32x2_DIGEST]


def test_grid_network_names_shapes_and_cost():
    network = make_network(64, 2, network="grid")
    params = init(network)["params"]
    assert sorted(params) == [
        "actor",
        "cell_encoder",
        "cell_out",
        "conv_0",
        "conv_1",
        "critic",
        "trunk_0",
        "trunk_1",
    ]
    assert params["cell_encoder"]["kernel"].shape == (43, 16)  # 42 channels + the player plane
    assert params["conv_0"]["kernel"].shape == (3, 3, 16, 16)
    assert params["trunk_0"]["kernel"].shape == (36 * 8 + 10 + 23, 64)
    assert params["actor"]["kernel"].shape == (64, 28)
    logits, value = network.apply({"params": params}, jnp.ones((5, OBS_SIZE)))
    assert logits.shape == (5, 28) and value.shape == (5,)
    logits, value = network.apply(
        {"params": params}, jnp.ones((OBS_SIZE,))
    )  # unbatched, as viewers call it
    assert logits.shape == (28,) and value.shape == ()
    line = describe_network(make_network(256, 2, network="grid"))
    assert line.startswith("Network: grid, 161,157 parameters") and "XLA cost analysis" in line
    grid_flops = float(line.split(", ")[2].split()[0])
    mlp_flops = float(describe_network(make_network(256, 2)).split(", ")[2].split()[0])
    assert grid_flops < 0.8 * mlp_flops


def test_conv3x3_is_flax_conv_with_same_padding():
    import flax.linen as nn

    from hackmatrix.purejaxrl.network import Conv3x3

    x = jax.random.normal(jax.random.PRNGKey(1), (5, 6, 6, 16))
    params = Conv3x3(12).init(jax.random.PRNGKey(0), x)
    reference = nn.Conv(12, (3, 3), padding="SAME")
    jax.tree_util.tree_map(
        np.testing.assert_array_equal, params, reference.init(jax.random.PRNGKey(0), x)
    )
    np.testing.assert_allclose(Conv3x3(12).apply(params, x), reference.apply(params, x), atol=1e-5)
    assert Conv3x3(12).apply(params, x[0]).shape == (6, 6, 12)  # unbatched


def test_grid_bf16_keeps_float32_params_and_outputs():
    network = make_network(32, 1, bf16=True, network="grid")
    params = init(network)
    assert all(x.dtype == jnp.float32 for x in jax.tree_util.tree_leaves(params))
    logits, value = network.apply(params, jnp.ones((2, OBS_SIZE)))
    assert logits.dtype == jnp.float32 and value.dtype == jnp.float32


def test_player_plane_marks_the_players_cell(game_module):
    obs, state = game_module.reset(jax.random.PRNGKey(4), game_module.EnvParams())
    row, col = (
        game_module.state_to_json(state)["player"]["row"],
        game_module.state_to_json(state)["player"]["col"],
    )
    plane = np.asarray(player_plane(obs[None, :10]))[0, :, :, 0]
    expected = np.zeros((6, 6), np.float32)
    expected[row, col] = 1.0
    np.testing.assert_array_equal(plane, expected)
    every = np.stack([np.eye(1, 36, k)[0] for k in range(36)])  # each cell in turn
    rows, cols = np.divmod(np.arange(36), 6)
    player = np.zeros((36, 10), np.float32)
    player[:, 0], player[:, 1] = np.float32(rows / 5), np.float32(cols / 5)
    np.testing.assert_array_equal(
        np.asarray(player_plane(jnp.asarray(player))).reshape(36, 36), every
    )


@pytest.mark.parametrize(
    "kind, sizes",
    [
        ("mlp", {"hidden_dim": 48, "num_layers": 3}),
        (
            "grid",
            {"hidden_dim": 40, "num_layers": 1, "cell_dim": 12, "num_convs": 1, "cell_out_dim": 4},
        ),
    ],
)
def test_architecture_is_recognised_from_the_parameters(kind, sizes):
    network = network_from_config({"network": kind, **sizes})
    params = init(network)
    assert network_config_from_params(params) == {"network": kind, **sizes}
    rebuilt = network_for_params(jax.tree_util.tree_map(np.asarray, params))
    assert rebuilt == network
    assert network_for_params(params, {"network": kind, "bf16": True}).compute_dtype == jnp.bfloat16


def test_bad_network_choices_are_clear_errors():
    with pytest.raises(ValueError, match="choose one of mlp, grid"):
        make_network(32, 1, network="cnn")
    grid_params = init(make_network(32, 1, network="grid"))
    with pytest.raises(ValueError, match="says network='mlp'"):
        network_for_params(
            grid_params, {"hidden_dim": 32, "num_layers": 1}
        )  # an old config means mlp
    with pytest.raises(ValueError, match="neither the mlp"):
        network_config_from_params({"params": {"Dense_0": {}, "actor": {}}})
    assert NETWORKS == ("mlp", "grid")


# --------------------------------------------------- training, saving, every loader

# Trained on the stand-in game: what these tests check (the stored network kind, the
# resume check, every loader) is trainer plumbing, and the real game's compile would
# only slow them down. The loaded network then plays the real game.
TINY = [
    *TINY_FLAGS,
    "--no-episode-gif",
    "--total-timesteps",
    str(4 * TINY_BATCH),
    "--env-module",
    "standin_env",
]


@pytest.fixture(scope="module")
def grid_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("grid")
    code = cli.main(
        [
            *TINY,
            "--network",
            "grid",
            "--checkpoint-dir",
            str(root),
            "--run-name",
            "grid",
        ]
    )
    assert code == 0
    return root / "grid"


def test_grid_run_records_its_network_and_refuses_another_on_resume(grid_run, capsys):
    with open(grid_run / "checkpoint_4.pkl", "rb") as f:
        payload = pickle.load(f)
    assert payload["config"]["network"] == "grid"
    assert "trunk_0" in payload["params"]["params"]
    capsys.readouterr()
    code = cli.main(
        [
            *TINY,
            "--network",
            "mlp",
            "--checkpoint-dir",
            str(grid_run.parent),
            "--resume",
            str(grid_run / "checkpoint_4.pkl"),
            "--total-timesteps",
            str(8 * TINY_BATCH),
        ]
    )
    assert code == 2 and "trained with network=grid" in capsys.readouterr().err


def test_resume_without_network_flags_keeps_the_checkpoints_network(grid_run, tmp_path, capsys):
    # train.sh passes --network grid on fresh runs only; a resume (by it or by hand) of any
    # run must not need the architecture repeated.
    run = tmp_path / "grid"
    shutil.copytree(grid_run, run)
    capsys.readouterr()
    code = cli.main(
        [
            *TINY,
            "--checkpoint-dir",
            str(tmp_path),
            "--resume",
            str(run / "checkpoint_4.pkl"),
            "--total-timesteps",
            str(8 * TINY_BATCH),
        ]
    )
    assert code == 0
    assert "Network: continuing the checkpoint's network=grid" in capsys.readouterr().out
    with open(run / "checkpoint_8.pkl", "rb") as f:
        assert pickle.load(f)["config"]["network"] == "grid"


def test_shared_loader_builds_the_grid_network(grid_run, tmp_path):
    from hackmatrix.purejaxrl.checkpoint import load_policy

    for source in (grid_run, grid_run / "checkpoint_4.pkl", grid_run / "final_params.npz"):
        stored = load_policy(source)
        assert isinstance(stored.network, GridActorCritic), source
        logits, _ = stored.network.apply(stored.params, np.zeros((2, OBS_SIZE), np.float32))
        assert logits.shape == (2, 28)
    alone = tmp_path / "params_4.npz"  # no training config beside it: recognised from the names
    shutil.copy(grid_run / "params_4.npz", alone)
    stored = load_policy(alone)
    assert stored.config == {} and isinstance(stored.network, GridActorCritic)


def test_viewer_policy_loads_the_grid_network(grid_run, game_module):
    from hackmatrix.render.agent_policy import load_policy

    obs, state = game_module.reset(jax.random.PRNGKey(0), game_module.EnvParams())
    mask = np.asarray(game_module.action_mask(state))
    for path in (grid_run / "params_4.npz", grid_run / "checkpoint_4.pkl"):
        policy = load_policy(path)
        assert policy.architecture.network == "grid" and policy.architecture.hidden_dim == 32
        assert mask[policy.act(np.asarray(obs), mask)]


def test_episode_gif_plays_a_loaded_grid_network(grid_run, game_module, tmp_path):
    pytest.importorskip("PIL")
    from hackmatrix.analysis.episode_gif import EpisodeGif
    from hackmatrix.purejaxrl.checkpoint import load_policy

    stored = load_policy(grid_run)
    messages = []
    gif = EpisodeGif(game_module, stored.network, tmp_path, max_steps=4, say=messages.append)
    path = gif.record(4, stored.params)
    assert path is not None and path.is_file(), messages


def test_parity_record_plays_a_grid_checkpoint(grid_run, tmp_path, capsys):
    from parity.__main__ import main
    from parity.trace import read_trace

    out = tmp_path / "grid.jsonl"
    code = main(
        [
            "record",
            "--engine",
            "jax",
            "--policy",
            "checkpoint",
            "--checkpoint",
            str(grid_run / "params_4.npz"),
            "--seed",
            "3",
            "--max-steps",
            "10",
            "--out",
            str(out),
        ]
    )
    assert code == 0, capsys.readouterr()
    trace = read_trace(out)
    masks = [trace.start.mask] + [step.mask for step in trace.steps[:-1]]
    assert trace.steps and all(mask[step.action] for step, mask in zip(trace.steps, masks))
