"""HackMatrixEnv: the Gymnasium env over the Swift CLI (training.md §6.3, observation.md §7)."""

import os
import signal
import sys

import gymnasium as gym
import numpy as np
import pytest

from hackmatrix.names import ACTION_COUNT, OBS_SIZE, REWARD_COMPONENT_NAMES
from hackmatrix.swift_bridge.client import CliError, EngineCrashed
from hackmatrix.swift_bridge.gym_env import HackMatrixEnv
from hackmatrix.swift_bridge.observation import flatten_observation


def test_missing_binary_gives_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("HACKMATRIX_BINARY", str(tmp_path / "no-such-binary"))
    with pytest.raises(FileNotFoundError, match="HACKMATRIX_BINARY"):
        HackMatrixEnv()


def test_an_engine_of_another_protocol_is_refused(tmp_path):
    script = tmp_path / "old_engine.py"
    script.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    hello = {'protocol': 'hackmatrix-cli', 'protocolVersion': '1.0', 'actionCount': 28}\n"
        "    print(json.dumps(hello), flush=True)\n"
    )
    exe = tmp_path / "old-hackmatrix"
    exe.write_text(f"#!/bin/sh\nexec {sys.executable} {script}\n")
    exe.chmod(0o755)
    with pytest.raises(RuntimeError, match="speaks protocol 1.0"):
        HackMatrixEnv(binary=str(exe))


@pytest.fixture
def make_env(swift_binary):
    envs = []

    def make(**kwargs):
        env = HackMatrixEnv(binary=str(swift_binary), **kwargs)
        envs.append(env)
        return env

    yield make
    for env in envs:
        env.close()


def masked_random_action(rng: np.random.Generator, mask: np.ndarray) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


def play(env, seed: int, steps: int, policy_seed: int = 0):
    """Reset with `seed` and take up to `steps` masked random actions; return the transcript."""
    rng = np.random.default_rng(policy_seed)
    obs, info = env.reset(seed=seed)
    transcript = [(flatten_observation(obs), info["action_mask"].copy(), None, False)]
    for _ in range(steps):
        obs, reward, terminated, truncated, info = env.step(
            masked_random_action(rng, env.action_masks())
        )
        transcript.append(
            (flatten_observation(obs), info["action_mask"].copy(), reward, terminated)
        )
        if terminated:
            break
    return transcript


@pytest.mark.swift
def test_spaces_and_reset_contents(make_env):
    env = make_env()
    assert env.action_space == gym.spaces.Discrete(28)
    assert set(env.observation_space.spaces) == {"player", "programs", "grid"}
    assert env.observation_space["programs"].dtype == np.int32
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    assert info["seed"] == 3 and info["step_index"] == 0
    assert info["action_mask"].dtype == bool and info["action_mask"].shape == (ACTION_COUNT,)
    assert np.array_equal(env.action_masks(), info["action_mask"])
    assert env.engine.get_valid_actions() == list(np.flatnonzero(info["action_mask"]))


@pytest.mark.swift
def test_gymnasium_env_checker(swift_binary):
    from gymnasium.utils.env_checker import check_env

    env = gym.make(
        "HackMatrix-v0", binary=str(swift_binary), render_mode="ansi", disable_env_checker=True
    )
    try:
        check_env(env.unwrapped, skip_render_check=False)  # also renders through rgb_array
    finally:
        env.close()


@pytest.mark.swift
@pytest.mark.filterwarnings("ignore:.*(is an image|an image is 36x36).*:UserWarning")
def test_sb3_env_checker(make_env):
    from stable_baselines3.common.env_checker import check_env

    check_env(make_env(), warn=True)
    check_env(make_env(flat_observation=True), warn=True)


@pytest.mark.swift
def test_same_seed_same_episode(make_env):
    first = play(make_env(), seed=11, steps=60)
    second = play(make_env(), seed=11, steps=60)
    assert len(first) == len(second)
    for a, b in zip(first, second):
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
        assert a[2:] == b[2:]


@pytest.mark.swift
def test_unseeded_resets_differ_but_follow_the_env_rng(make_env):
    env = make_env()
    env.reset(seed=1234567)
    seeds = {env.reset()[1]["seed"] for _ in range(4)}
    assert len(seeds) == 4
    other = make_env()
    other.reset(seed=1234567)
    assert other.reset()[1]["seed"] in seeds  # drawn from np_random seeded by the first reset
    big = make_env().reset(seed=2**40)[1]["seed"]
    assert 0 <= big < 2**32


@pytest.mark.swift
def test_reward_is_the_sum_of_the_components(make_env):
    env = make_env()
    rng = np.random.default_rng(5)
    for seed in (1, 2, 3):
        env.reset(seed=seed)
        for _ in range(80):
            _, reward, terminated, _, info = env.step(masked_random_action(rng, env.action_masks()))
            components = info["reward_components"]
            assert list(components) == list(REWARD_COMPONENT_NAMES)
            total = 0.0
            for key in REWARD_COMPONENT_NAMES:
                total += components[key]
            assert reward == pytest.approx(total, abs=1e-9)
            assert components["step_penalty"] == pytest.approx(-0.01)
            if terminated:
                break


@pytest.mark.swift
def test_invalid_actions_are_no_ops(make_env):
    env = make_env()
    obs, info = env.reset(seed=8)
    mask = info["action_mask"]
    masked = [a for a in range(ACTION_COUNT) if not mask[a]]
    assert masked, "a fresh game always has unaffordable programs"
    before = env.get_state()
    for action in (masked[0], 99, -1, np.int64(masked[-1])):
        obs2, reward, terminated, truncated, info2 = env.step(action)
        assert info2["invalid_action"] is True
        assert (reward, terminated, truncated) == (0.0, False, False)
        assert all(v == 0.0 for v in info2["reward_components"].values())
        assert np.array_equal(flatten_observation(obs2), flatten_observation(obs))
        assert np.array_equal(info2["action_mask"], mask)
    assert env.get_state() == before
    _, _, _, _, info3 = env.step(int(np.flatnonzero(mask)[0]))
    assert info3["invalid_action"] is False and info3["step_index"] == 1
    with pytest.raises(TypeError):
        env.step(1.5)


@pytest.mark.swift
def test_reset_from_a_state(make_env):
    source = make_env()
    rng = np.random.default_rng(4)
    source.reset(seed=30)
    for _ in range(5):
        obs, _, terminated, _, info = source.step(masked_random_action(rng, source.action_masks()))
        assert not terminated
    copy = make_env()
    copy_obs, copy_info = copy.reset(options={"state": source.get_state()})
    assert np.array_equal(flatten_observation(copy_obs), flatten_observation(obs))
    assert np.array_equal(copy_info["action_mask"], info["action_mask"])
    assert copy_info["seed"] == 30 and copy_info["step_index"] == 5
    action = masked_random_action(rng, copy.action_masks())
    a, b = source.step(action), copy.step(action)
    assert np.array_equal(flatten_observation(a[0]), flatten_observation(b[0])) and a[1] == b[1]


@pytest.mark.swift
def test_flat_mode_matches_the_dict_mode(make_env):
    dict_env, flat_env = make_env(), make_env(flat_observation=True)
    obs_d, _ = dict_env.reset(seed=21)
    obs_f, _ = flat_env.reset(seed=21)
    assert obs_f.shape == (OBS_SIZE,) and obs_f.dtype == np.float32
    assert np.array_equal(obs_f, flatten_observation(obs_d))


@pytest.mark.swift
def test_episode_end_reports_stats_and_all_false_mask(make_env):
    env = make_env()
    rng = np.random.default_rng(0)
    for seed in range(20):
        env.reset(seed=seed)
        for _ in range(3000):
            _, _, terminated, _, info = env.step(masked_random_action(rng, env.action_masks()))
            if terminated:
                break
        if terminated:
            break
    assert terminated, "random play should end an episode within 3000 steps"
    stats = info["episode_stats"]
    assert stats["steps"] == sum(stats["action_counts"].values())
    assert set(stats["reward_components"]) == set(REWARD_COMPONENT_NAMES)
    assert stats["total_reward"] == pytest.approx(
        sum(stats["reward_components"].values()), abs=1e-6
    )
    assert 1 <= stats["highest_stage"] <= 8
    assert not info["action_mask"].any() and not env.action_masks().any()
    with pytest.raises(CliError) as error:
        env.step(0)
    assert error.value.code == "episode_over"


@pytest.mark.swift
def test_time_limit_truncates(swift_binary):
    env = gym.make("HackMatrix-v0", binary=str(swift_binary), max_episode_steps=3)
    try:
        env.reset(seed=4)
        rng = np.random.default_rng(1)
        results = [
            env.step(masked_random_action(rng, env.unwrapped.action_masks())) for _ in range(3)
        ]
        assert [r[3] for r in results] == [False, False, True]
        assert not any(r[2] for r in results)
    finally:
        env.close()


@pytest.mark.swift
def test_ansi_render_draws_the_board(make_env):
    env = make_env(render_mode="ansi")
    env.reset(seed=2)
    text = env.render()
    lines = text.splitlines()
    assert lines[0].startswith("stage 1")
    assert len(lines) == 2 + 6 + 1
    assert "@3" in text and "EX" in text


@pytest.mark.swift
def test_killing_the_engine_mid_episode(make_env):
    env = make_env()
    env.reset(seed=9)
    pid = env.engine.pid
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(EngineCrashed) as info:
        env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert "hackmatrix" in str(info.value)
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped: no zombie left


def _env_factory(binary: str):
    def make():
        from hackmatrix.swift_bridge.gym_env import HackMatrixEnv

        return HackMatrixEnv(binary=binary)

    return make


@pytest.mark.swift
@pytest.mark.parametrize("kind", ["dummy", "subproc"])
def test_sb3_vector_envs(swift_binary, kind):
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    factories = [_env_factory(str(swift_binary)) for _ in range(2)]
    vec = DummyVecEnv(factories) if kind == "dummy" else SubprocVecEnv(factories)
    try:
        vec.seed(17)
        obs = vec.reset()
        assert obs["grid"].shape == (2, 6, 6, 42)
        rng = np.random.default_rng(3)
        for _ in range(30):
            masks = get_action_masks(vec)
            assert masks.shape == (2, ACTION_COUNT) and masks.any(axis=1).all()
            actions = np.array([masked_random_action(rng, m) for m in masks])
            obs, rewards, dones, infos = vec.step(actions)
            assert rewards.shape == (2,) and not any(i["invalid_action"] for i in infos)
    finally:
        vec.close()


@pytest.mark.swift
@pytest.mark.parametrize("kind", ["sync", "async"])
def test_gymnasium_vector_env(swift_binary, kind):
    factories = [_env_factory(str(swift_binary)) for _ in range(2)]
    # forkserver: this pytest process has JAX's threads running, and forking it may deadlock.
    vec = (
        gym.vector.SyncVectorEnv(factories)
        if kind == "sync"
        else gym.vector.AsyncVectorEnv(factories, context="forkserver")
    )
    try:
        obs, info = vec.reset(seed=[1, 2])
        assert obs["player"].shape == (2, 10)
        masks = info["action_mask"]
        rng = np.random.default_rng(2)
        for _ in range(10):
            actions = np.array([masked_random_action(rng, m) for m in masks])
            obs, rewards, terminated, truncated, info = vec.step(actions)
            assert not info["invalid_action"].any()
            masks = np.stack(vec.call("action_masks"))
    finally:
        vec.close()


@pytest.mark.swift
def test_bench_gym_writes_its_table_as_json(swift_binary, tmp_path):
    import json

    from script_loading import load_script

    bench = load_script("bench_gym")
    out = tmp_path / "bench.json"
    assert (
        bench.main(
            [
                "--seconds",
                "0.3",
                "--num-envs",
                "1",
                "--skip-ppo",
                "--binary",
                str(swift_binary),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    rows = json.loads(out.read_text())["rows"]
    assert set(rows) == {"cli_client", "gym_env", "subproc_vec_1"}
    assert all(row["steps"] > 0 and row["steps_per_second"] > 0 for row in rows.values())
