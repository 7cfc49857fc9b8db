"""HackMatrix: a 6x6 tactical roguelike for reinforcement-learning research.

Two engines implement the same game: the Swift reference engine (driven
through its headless CLI, see ``hackmatrix.swift_bridge.gym_env``) and the pure-JAX engine
in ``hackmatrix.jax_env``. This module imports nothing heavy so that
``hackmatrix.jax_env`` and ``hackmatrix.purejaxrl`` work on a machine that
has only jax/flax/optax/numpy; the Gymnasium env is registered only when
gymnasium is installed.
"""

__version__ = "0.1.0"


def _register_gymnasium_env() -> None:
    try:
        import gymnasium
    except ImportError:  # an accelerator box with only JAX installed
        return
    if "HackMatrix-v0" not in gymnasium.registry:
        gymnasium.register(
            id="HackMatrix-v0", entry_point="hackmatrix.swift_bridge.gym_env:HackMatrixEnv"
        )


_register_gymnasium_env()
