"""The behaviour evaluation at each checkpoint of a training run, logged as `eval/*`
(training.md §9.5): the trainer's callback, which never raises."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import flax.linen as nn

from .evaluation import evaluate_policy
from .facts import ENDS
from .games import DEFAULT_BATCH, DEFAULT_MAX_STEPS, check_settings
from .policies import Policy

TRAINING_KEYS = {
    "eval/num_episodes": "episodes",
    "eval/mean_episode_return": "mean_return",
    "eval/median_episode_return": "median_return",
    "eval/mean_episode_length": "mean_length",
    "eval/mean_final_stage": "mean_final_stage",
    "eval/stage1_exit_rate": "stage1_exit_rate",
    "eval/win_rate": "win_rate",
    "eval/siphons_per_episode": "siphons_per_episode",
    "eval/siphon_suboptimal_share": "siphon_suboptimal_share",
    "eval/programs_per_episode": "programs_per_episode",
    "eval/program_use_rate": "program_use_rate",
    "eval/program_use_rate_without_undo": "program_use_rate_without_undo",
    "eval/program_gain_rate": "program_gain_rate",
    "eval/siphon_programs_at_death_per_episode": "siphon_programs_at_death_per_episode",
    "eval/program_holding_step_share": "program_holding_step_share",
}


def training_metrics(summary: dict, seconds: float) -> dict[str, float]:
    """The `eval/*` keys logged at each checkpoint (training.md §9.5)."""
    n = summary["episodes"]
    metrics = {
        key: float("nan") if summary[name] is None else float(summary[name])
        for key, name in TRAINING_KEYS.items()
    }
    metrics.update({f"eval/end_{name}_rate": summary["ends"][name] / n for name in ENDS})
    # Block avoidance (specs/experiments/21-siphon-yield.md §21.1): blocks drained and
    # transmissions queued per siphon.
    drained = summary["siphon_yield"]
    if drained["data_blocks"] is None:
        blocks = transmissions = float("nan")
    else:
        blocks = drained["data_blocks"] + drained["program_blocks"]
        transmissions = drained["transmissions"]
    metrics["eval/siphon_blocks_per_siphon"] = float(blocks)
    metrics["eval/siphon_transmissions_per_siphon"] = float(transmissions)
    metrics["eval/seconds"] = seconds
    return metrics


class CheckpointEvaluation:
    """Plays the fixed evaluation games at each checkpoint; a failure is a warning, never raised."""

    def __init__(
        self,
        env: ModuleType,
        network: nn.Module,
        *,
        episodes: int,
        mode: str = "greedy",
        max_steps: int = DEFAULT_MAX_STEPS,
        seed: int = 0,
        say: Callable[..., Any] = print,
    ):
        check_settings(
            mode, episodes=episodes, first_game=0, max_steps=max_steps, batch=DEFAULT_BATCH
        )
        self.env, self.network, self.mode = env, network, mode
        self.settings = dict(
            episodes=episodes, max_steps=max_steps, batch=min(episodes, DEFAULT_BATCH), seed=seed
        )
        self.say = say

    def run(self, update: int, params: Any) -> dict[str, float] | None:
        try:
            result = evaluate_policy(
                self.env,
                Policy(label="training", network=self.network, params=params),
                self.mode,
                **self.settings,
            )
        except Exception as error:
            self.say(
                f"WARNING: behaviour evaluation at update {update} failed "
                f"({type(error).__name__}: {error})"
            )
            return None
        s = result.summary
        self.say(
            f"Eval ({self.mode}, {s['episodes']} games, {result.seconds:.1f} s): "
            f"return {s['mean_return']:.2f}, "
            f"length {s['mean_length']:.1f}, stage {s['mean_final_stage']:.2f}, exit rate "
            f"{s['stage1_exit_rate']:.3f}, wins {s['ends']['won']}, unfinished {s['unfinished']}, "
            f"siphons {s['siphons_per_episode']:.2f}/game, "
            f"programs {s['programs_per_episode']:.2f}/game"
        )
        return training_metrics(s, result.seconds)
