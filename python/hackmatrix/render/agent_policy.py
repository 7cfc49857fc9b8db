"""A trained JAX policy, loaded for watching (training.md §5.1).

Finds the parameters file (`--latest` rules, run directories, `.pkl` or
`.npz`), detects the network (mlp or grid) and its sizes from the parameter
names and shapes (mlp: `Dense_0 .. Dense_{L-1}` trunk, `Dense_L` actor,
`Dense_{L+1}` critic; grid: `cell_encoder`, `conv_i`, `cell_out`, `trunk_i`,
`actor`, `critic`; training.md §2.3), checks them with a forward pass on a
zero observation, and picks actions: greedy (argmax of the masked logits) or
sampled from the masked softmax. The network is built by the trainer's own
`network_from_config`, so the viewer runs exactly the model that was trained.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hackmatrix.names import ACTION_COUNT, OBS_SIZE


class PolicyLoadError(ValueError):
    """A parameters path that cannot be used; the message names the file."""


# ----------------------------------------------------------------- finding files


def params_in_run(run_dir: Path) -> Path | None:
    """A run's parameters file for watching: final_params.npz, else the highest params_N.npz."""
    from hackmatrix.purejaxrl.checkpoint import final_params_in_run

    return final_params_in_run(run_dir)


def find_latest_params(checkpoint_dir: str | Path) -> Path:
    """`--latest`: the newest run directory under `checkpoint_dir` that holds parameters."""
    root = Path(checkpoint_dir)
    if not root.is_dir():
        raise PolicyLoadError(f"--latest: checkpoint directory {root} does not exist")
    runs = [d for d in [root, *root.rglob("*")] if d.is_dir() and params_in_run(d) is not None]
    if not runs:
        raise PolicyLoadError(f"--latest: no final_params.npz or params_*.npz under {root}")
    newest = max(
        runs, key=lambda d: (max(f.stat().st_mtime for f in d.iterdir() if f.is_file()), str(d))
    )
    params = params_in_run(newest)
    assert params is not None  # `runs` holds only directories with parameters
    return params


def resolve_model_path(path: str | Path) -> Path:
    """A `.npz` or `.pkl` file as given; a run directory means its final or highest params file."""
    from hackmatrix.purejaxrl.checkpoint import CheckpointError, resolve_params_path

    try:
        return resolve_params_path(Path(path), prefer_final_params=True)
    except CheckpointError as error:
        raise PolicyLoadError(str(error)) from error


def load_param_tree(path: Path) -> dict:
    """The `{"params": {"Dense_i": {"kernel", "bias"}}}` tree from a `.npz` or `.pkl`."""
    from hackmatrix.purejaxrl.checkpoint import CheckpointError, load_params

    try:
        tree = load_params(path)
    except CheckpointError as error:
        raise PolicyLoadError(str(error)) from error
    if hasattr(tree, "unfreeze"):
        tree = tree.unfreeze()
    if not isinstance(tree, dict) or "params" not in tree:
        raise PolicyLoadError(f"{path}: expected a parameter tree with a top-level 'params' entry")
    return tree


# ----------------------------------------------------------- architecture


@dataclass(frozen=True)
class Architecture:
    hidden_dim: int
    num_layers: int
    network: str = "mlp"
    # the grid network's per-cell sizes (training.md §2.3); () for the mlp
    grid_sizes: tuple = ()

    def config(self) -> dict:
        """The training-config entries `network_from_config` builds this network from."""
        return {
            "network": self.network,
            "hidden_dim": self.hidden_dim,
            "num_layers": self.num_layers,
            **dict(self.grid_sizes),
        }


def detect_architecture(tree: dict, source: str = "parameters") -> Architecture:
    from hackmatrix.purejaxrl.network import network_config_from_params

    try:
        found = network_config_from_params(tree)
    except ValueError as error:
        raise PolicyLoadError(f"{source}: {error}") from error
    grid_sizes = tuple(
        (k, v) for k, v in found.items() if k not in ("network", "hidden_dim", "num_layers")
    )
    return Architecture(
        hidden_dim=found["hidden_dim"],
        num_layers=found["num_layers"],
        network=found["network"],
        grid_sizes=grid_sizes,
    )


def _shapes(tree) -> dict[str, tuple]:
    return {
        f"{layer}.{name}": tuple(np.shape(value))
        for layer, leaves in sorted(tree["params"].items())
        for name, value in sorted(leaves.items())
    }


# ------------------------------------------------------------------ policy


class Policy:
    """Picks actions from flat observations and masks."""

    def __init__(
        self, tree: dict, architecture: Architecture, source: str = "parameters", seed: int = 0
    ):
        import jax

        from hackmatrix.purejaxrl.network import network_from_config

        self.architecture = architecture
        self.source = source
        self._network = network_from_config(architecture.config())
        expected = jax.eval_shape(
            self._network.init, jax.random.PRNGKey(0), np.zeros((OBS_SIZE,), np.float32)
        )
        want, have = _shapes(expected), _shapes(tree)
        if want != have:
            detected = detect_architecture(tree, source)
            diff = [
                f"{k}: file {have.get(k)} vs requested {want.get(k)}"
                for k in sorted(set(want) | set(have))
                if want.get(k) != have.get(k)
            ]
            raise PolicyLoadError(
                f"{source}: parameters do not fit the requested network "
                f"(requested hidden_dim={architecture.hidden_dim}, "
                f"num_layers={architecture.num_layers}; "
                f"detected hidden_dim={detected.hidden_dim}, num_layers={detected.num_layers}): "
                + "; ".join(diff[:6])
            )
        self._params = jax.tree_util.tree_map(lambda x: np.asarray(x, np.float32), tree)
        self._apply = jax.jit(self._network.apply)
        logits, value = self._apply(
            self._params, np.zeros((OBS_SIZE,), np.float32)
        )  # the test forward pass
        if np.shape(logits) != (ACTION_COUNT,) or np.shape(value) != ():
            raise PolicyLoadError(
                f"{source}: the network gives logits {np.shape(logits)} and value "
                f"{np.shape(value)}, expected ({ACTION_COUNT},) and ()"
            )
        self._rng = np.random.default_rng(seed)

    @property
    def network(self):
        """The flax module (for tools that use the network beyond `act`, such as the search)."""
        return self._network

    @property
    def params(self):
        return self._params

    def logits(self, observation: np.ndarray) -> np.ndarray:
        obs = np.asarray(observation, dtype=np.float32)
        if obs.shape != (OBS_SIZE,):
            raise ValueError(f"observation must have shape ({OBS_SIZE},), got {obs.shape}")
        logits, _ = self._apply(self._params, obs)
        return np.asarray(logits, dtype=np.float32)

    def act(self, observation: np.ndarray, mask, *, greedy: bool = True) -> int:
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != (ACTION_COUNT,):
            raise ValueError(f"mask must have shape ({ACTION_COUNT},), got {mask.shape}")
        if not mask.any():
            raise ValueError("no valid action: the mask is all false")
        logits = np.where(mask, self.logits(observation).astype(np.float64), -np.inf)
        if greedy:
            return int(np.argmax(logits))
        probs = np.exp(logits - logits.max())
        probs /= probs.sum()
        return int(self._rng.choice(ACTION_COUNT, p=probs))


def load_policy(
    path: str | Path, *, hidden_dim: int | None = None, num_layers: int | None = None, seed: int = 0
) -> Policy:
    """Load parameters and build the policy; explicit sizes override the detected ones."""
    path = resolve_model_path(path)
    tree = load_param_tree(path)
    detected = detect_architecture(tree, str(path))
    architecture = Architecture(
        hidden_dim=hidden_dim if hidden_dim is not None else detected.hidden_dim,
        num_layers=num_layers if num_layers is not None else detected.num_layers,
        network=detected.network,
        grid_sizes=detected.grid_sizes,
    )
    return Policy(tree, architecture, source=str(path), seed=seed)
