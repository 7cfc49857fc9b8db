"""The trainer's results are pinned: refactors of the trainer must leave them bit for bit.

Each recipe trains the real game for a few tiny updates through the real CLI, then hashes
the parameters, the Adam state, the runner's key and the env batch it stopped at. The
hashes were recorded before the trainer's reward shaping, schedules and configuration
became layers (issue 48) and must not move: a change that alters them changes training.
The recipes cover `train.sh`'s default (the program levers switching on mid-chunk), the
trainer's own defaults (canonical reward, MLP), a curriculum, every other reward lever,
and the annealed schedules (one update a chunk, so the old per-chunk schedule and a
per-update one read the same values).
"""

import hashlib
import os
import pickle
import platform

import numpy as np
import pytest
from conftest import STAGED_REWARD, TINY_BATCH, TINY_FLAGS

from hackmatrix.purejaxrl import cli

RECIPES = {
    # train.sh's recipe, the levers switching on at update 3 (inside the second chunk)
    "train_sh_default": [
        "--network",
        "grid",
        "--ent-coef",
        "0.05",
        "--vf-coef",
        "0.1",
        *STAGED_REWARD,
        "--program-levers-from-update",
        "3",
    ],
    "canonical_mlp": [],
    "curriculum": ["--curriculum", "mixed", "--curriculum-p0", "0.5"],
    "other_levers": [
        "--program-bonus",
        "0.5",
        "--program-bonus-scale",
        "spawn-cost",
        "--program-bonus-at-death",
        "withhold",
        "--program-use-bonus",
        "1",
        "--distance-shaping",
        "potential",
        "--max-episode-steps",
        "20",
        "--value-target",
        "symlog",
        "--program-levers-from-update",
        "1",
    ],
    "annealed": [
        "--log-interval",
        "1",
        "--reward-weights",
        "kills=2,step_penalty=0",
        "--reward-weights-anneal",
        "0.5",
        "--reward-weights-final",
        "kills=0.5",
        "--ent-coef-final",
        "0.01",
        "--ent-coef-anneal",
        "0.5",
        "--curriculum",
        "mixed",
        "--curriculum-anneal",
        "0.75",
    ],
}

UPDATES = 4

# Recorded at commit dcd3f9c (before the layers), jax/jaxlib 0.10.2 on x86-64 CPUs, by the
# processor and the optimization level the compile ran at. XLA tunes its CPU code to the host
# processor and its LLVM optimizations change the rounding, so each kind of processor and
# each level (test.sh's default JAX_DISABLE_MOST_OPTIMIZATIONS=1, a user's training 0) has
# its own hashes. The AVX-512 processors give the same hashes for every recipe but the
# grid network's (`train_sh_default`): its convolutions round one way on the Intel Xeon and
# the Zen 5 EPYC, another on the Zen 4 EPYC. The processor without AVX-512 gives other
# hashes for every recipe. An AMD processor with AVX-512 is told apart by its CPU family.
INTEL_AVX512 = {
    "1": {
        "annealed": "42364b0209326aa748603b26f48d38407ac5655091abf90784f5058299146be7",
        "canonical_mlp": "2f8824559a5eaaaf75dad013a113db6ad1d8939f73202fa2f359c3ed162f75b8",
        "curriculum": "15d1d523b3e1c9809eb8420df1900f87164f2d37604a5149281e7e5d263a3fa4",
        "other_levers": "713f0e4320ca67d11d037a606bf1d1deb7120373653b46c5d6b6778c6fa19c19",
        "train_sh_default": "5f969b4352a9aa65bc08f55e495091f04208f8d80aa1aa17e66c54537c28af2a",
    },
    "0": {
        "annealed": "8a98ea38782f0b645f4cb65a2d16ebb1dddb48c57bc129a613c21c3dd2a2bcd3",
        "canonical_mlp": "7362e30652d146b83b6724d6549ee1cf38238d2282d7997a8e6e066ab3d67a17",
        "curriculum": "56f25caddfda8d033ba784a71d3eaa289068d896deb80448fce9592f242a6fc2",
        "other_levers": "b7a555edda0a5b66b6e76edf530c855020465dd6cf99acd714f4f5a135b96173",
        "train_sh_default": "04a5c3a884fa8ceadf5e3927a72cf462b79e66253ffd295dc37215127a2e26c0",
    },
}
EXPECTED = {
    # the development machine's 2-core Intel Xeon (AVX-512 with bf16, no AMX)
    "GenuineIntel/avx512": INTEL_AVX512,
    # a 2-core AMD EPYC of family 26 (Zen 5: AVX-512 with VP2INTERSECT, AVX-VNNI):
    # dcd3f9c run on it (2026-12-02) gave the Intel Xeon's hashes, every recipe, both levels
    "AuthenticAMD/avx512/family-26": INTEL_AVX512,
    # a 2-core AMD EPYC of family 25 (Zen 4: AVX-512 with bf16, VNNI, VBMI2): dcd3f9c run
    # on it (2026-11-30)
    "AuthenticAMD/avx512/family-25": {
        "1": {
            "annealed": "42364b0209326aa748603b26f48d38407ac5655091abf90784f5058299146be7",
            "canonical_mlp": "2f8824559a5eaaaf75dad013a113db6ad1d8939f73202fa2f359c3ed162f75b8",
            "curriculum": "15d1d523b3e1c9809eb8420df1900f87164f2d37604a5149281e7e5d263a3fa4",
            "other_levers": "713f0e4320ca67d11d037a606bf1d1deb7120373653b46c5d6b6778c6fa19c19",
            "train_sh_default": "5c09e2829e6519e59276820f0138bbfc031355fbd1c0738edba57ec20d6c7274",
        },
        "0": {
            "annealed": "8a98ea38782f0b645f4cb65a2d16ebb1dddb48c57bc129a613c21c3dd2a2bcd3",
            "canonical_mlp": "7362e30652d146b83b6724d6549ee1cf38238d2282d7997a8e6e066ab3d67a17",
            "curriculum": "56f25caddfda8d033ba784a71d3eaa289068d896deb80448fce9592f242a6fc2",
            "other_levers": "b7a555edda0a5b66b6e76edf530c855020465dd6cf99acd714f4f5a135b96173",
            "train_sh_default": "19ce4f71494e8ed0b2133160db704bff8c529041ddb01947fa0fafb9192868bc",
        },
    },
    # a 2-core AMD EPYC without AVX-512: dcd3f9c run on it (2026-12-01); every recipe
    # rounds differently from the AVX-512 processors here, the MLP ones too
    "AuthenticAMD/no-avx512": {
        "1": {
            "annealed": "b53544b6c78076e34898176e30fbca4c1905b90f214506cf99e1658a6e97fbb4",
            "canonical_mlp": "21b7a7a16be2b24798c20c14fc7c530c67cde3c46d49fccfa178576827997462",
            "curriculum": "6783bd2ea559d437e0b22a078c35de406ea62821625d6f373e13fa487ec3f257",
            "other_levers": "6dda4fa24c4967a5eafac65a4f8d6415500f2319dd40c187d6e0dc8c2abc0858",
            "train_sh_default": "d57b71d61f49d7926a233234771f82beb024d17800fcd53cb07744ce57fd0c3c",
        },
        "0": {
            "annealed": "6584b153fe602ab0ad204a305f8c43296a7f85f2a6d85bc33a88a790da577f6f",
            "canonical_mlp": "fc343f0313024ec969f5acd15630db906e18cce2edac92b9c9ab4d6035025743",
            "curriculum": "aa1713a554d10975964d79217e1358b25a1f03ace9ff602294d5beb3edf1cff0",
            "other_levers": "62771872932ef69acac026e8f71477b037dab8cbad1e83dfb9f7eab2cf175767",
            "train_sh_default": "82b018cd4c0fd122fc622326656be5dd21e8daab3d16099c26ab3cdaed246a58",
        },
    },
}
RECORDED_ON = ("cpu", "x86_64", "0.10.2")


def processor_kind() -> str:
    """The CPU's vendor and whether it has AVX-512, as Linux's /proc/cpuinfo names them
    ("unknown" elsewhere), and for an AMD processor with AVX-512 its CPU family (Zen 4 and
    Zen 5 round the grid network's convolutions differently): what decides how XLA's CPU
    code rounds, as far as recorded."""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            first = cpuinfo.read().split("\n\n", 1)[0]  # the first processor's block
    except OSError:
        return "unknown"
    pairs = (line.split(":", 1) for line in first.splitlines() if ":" in line)
    fields = {key.strip(): value.strip() for key, value in pairs}
    vendor = fields.get("vendor_id") or "unknown"
    avx512 = "avx512f" in fields.get("flags", "").split()
    kind = f"{vendor}/{'avx512' if avx512 else 'no-avx512'}"
    if vendor == "AuthenticAMD" and avx512:
        kind += f"/family-{fields.get('cpu family', 'unknown')}"
    return kind


def _digest(tree_leaves) -> str:
    h = hashlib.sha256()
    for leaf in tree_leaves:
        if leaf is None:
            h.update(b"none")
            continue
        array = np.asarray(leaf)
        h.update(str(array.dtype).encode() + str(array.shape).encode())
        h.update(np.ascontiguousarray(array).tobytes())
    return h.hexdigest()


def run_fingerprint(tmp_path, name: str) -> str:
    import jax

    argv = [
        *TINY_FLAGS,
        "--no-episode-gif",
        "--env-module",
        "hackmatrix.jax_env",
        "--total-timesteps",
        str(UPDATES * TINY_BATCH),
        "--seed",
        "3",
        *RECIPES[name],
        "--checkpoint-dir",
        str(tmp_path),
        "--run-name",
        name,
    ]
    assert cli.main(argv) == 0
    with open(tmp_path / name / f"checkpoint_{UPDATES}.pkl", "rb") as f:
        payload = pickle.load(f)
    batch = payload["env_batch"]
    leaves = [
        *jax.tree_util.tree_leaves(payload["params"]),
        *jax.tree_util.tree_leaves(payload["opt_state"]),
        payload["rng"],
        *batch["env_state_leaves"],
        batch["obs"],
        batch["episode_return"],
        batch["episode_length"],
    ]
    return _digest(leaves)


def recorded_hashes() -> dict[str, str]:
    """The hashes recorded for this machine's kind and optimization level; skips elsewhere
    (another processor or XLA version may round differently: the results are pinned where
    they were recorded, which is where CI runs).

    To pin a new kind, run these recipes with commit dcd3f9c's trainer on it, at both
    levels, and add its hashes above. dcd3f9c's CLI predates today's flags (--preset), so
    use the test as first written against it: `git worktree add /tmp/old dcd3f9c`, copy
    commit c919b56's tests/conftest.py, tests/purejaxrl/conftest.py and this file into
    the worktree, and call its `run_fingerprint` with /tmp/old/python, /tmp/old,
    /tmp/old/tests/purejaxrl and /tmp/old/tests first on sys.path."""
    import jax

    here = (jax.default_backend(), platform.machine(), jax.__version__)
    if here != RECORDED_ON:
        pytest.skip(f"hashes recorded on {RECORDED_ON}, this is {here}")
    kind = processor_kind()
    if kind not in EXPECTED:
        pytest.skip(f"hashes recorded on {sorted(EXPECTED)} processors, this is {kind}")
    level = os.environ.get("JAX_DISABLE_MOST_OPTIMIZATIONS", "0")
    if level not in EXPECTED[kind]:
        pytest.skip(f"no hashes recorded with JAX_DISABLE_MOST_OPTIMIZATIONS={level}")
    return EXPECTED[kind][level]


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_training_is_bit_identical_to_the_recorded_run(tmp_path, name):
    pytest.importorskip("hackmatrix.jax_env")
    expected = recorded_hashes()[name]
    assert run_fingerprint(tmp_path, name) == expected
