"""The episode GIF written at each checkpoint (analysis/episode_gif.py).

The runs of test_runs.py pass `--no-episode-gif` and check that it turns the GIF off.

Uses test_runs' tiny config so the training chunk comes from the shared
compilation cache.
"""

import builtins

import jax
import numpy as np
import pytest
from PIL import Image
from test_runs import BATCH, train

from hackmatrix.analysis.episode_gif import DEFAULT_MAX_STEPS, EpisodeGif, play_episode
from hackmatrix.purejaxrl.checkpoint import load_params
from hackmatrix.purejaxrl.network import make_network


def gif_frames(path) -> int:
    with Image.open(path) as image:
        return image.n_frames


@pytest.fixture(scope="module")
def gif_run(tmp_path_factory, game_module):
    if not hasattr(game_module, "state_to_json"):
        pytest.skip("the stand-in game cannot be rendered")
    root = tmp_path_factory.mktemp("gif")
    assert train(root, "--total-timesteps", str(4 * BATCH), episode_gif=True) == 0
    return root / "run", game_module


def test_each_checkpoint_writes_one_frame_per_step(gif_run):
    run_dir, env = gif_run
    assert sorted(p.name for p in run_dir.glob("episode_*.gif")) == [
        "episode_2.gif",
        "episode_4.gif",
    ]
    assert not [p for p in run_dir.iterdir() if "tmp" in p.name]
    # Replay the final parameters' episode (host params, like the trainer: a cache hit).
    network = make_network(32, 2)
    params = load_params(run_dir / "params_4.npz")

    def play():
        return jax.device_get(
            play_episode(
                jax.random.PRNGKey(0), params, env=env, network=network, max_steps=DEFAULT_MAX_STEPS
            )
        )

    episode = play()
    length = int(episode["length"])
    assert 1 <= length <= DEFAULT_MAX_STEPS
    if length < DEFAULT_MAX_STEPS:
        assert episode["done"][length - 1] and not episode["done"][: length - 1].any()
    assert gif_frames(run_dir / "episode_4.gif") == length + 1  # the start, then one per step

    # Every action is valid, the components add up, and the policy is greedy and repeatable.
    actions = episode["actions"][:length]
    assert episode["masks"][np.arange(length), actions].all()
    np.testing.assert_allclose(
        episode["components"][:length].sum(-1), episode["rewards"][:length], atol=1e-5
    )
    logits = np.asarray(network.apply(params, episode["start_obs"][None])[0][0])
    assert actions[0] == np.argmax(np.where(episode["masks"][0], logits, -np.inf))
    np.testing.assert_array_equal(play()["actions"], episode["actions"])


def test_missing_pillow_is_a_one_line_warning(gif_run, tmp_path, monkeypatch):
    _, env = gif_run
    real_import = builtins.__import__

    def no_render(name, *args, **kwargs):
        if name.startswith("hackmatrix.render") or name.startswith("PIL"):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    messages = []
    recorder = EpisodeGif(env, make_network(32, 2), tmp_path, say=messages.append)
    monkeypatch.setattr(builtins, "__import__", no_render)
    assert recorder.record(1, params=None) is None
    assert recorder.record(2, params=None) is None
    assert len(messages) == 1 and "episode GIFs off" in messages[0]
    assert not list(tmp_path.iterdir())


def test_a_failing_episode_is_a_warning_not_a_crash(gif_run, tmp_path):
    _, env = gif_run
    messages = []
    recorder = EpisodeGif(env, make_network(32, 2), tmp_path, say=messages.append)
    assert recorder.record(1, params={"params": {}}) is None  # params that do not fit the network
    assert len(messages) == 1 and "update 1 failed" in messages[0]
