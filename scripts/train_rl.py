"""A baseline that learns (issue 53): PPO from stable-baselines3 on ``tiles/TakuzuCells-v0`` — the
flat id, as SB3 takes it, no wrapper — trained on small days and measured on a held-out day against
random play and the reference solver.

    pip install -e '.[rl]'          # stable-baselines3 and sb3-contrib (torch's CPU build will do)
    python scripts/train_rl.py --steps 20000

It builds ``--days`` training days and one held-out day of side ``--size`` with ``tiles daily
build`` into ``--work`` (kept: a second run reuses them), trains with the ``shaped`` reward (potential-based:
+1 for a cell set to its solution value, -1 otherwise, taken back when the attempt is passed or judged;
offline only), and every ``--eval-every`` steps plays
``--eval-steps`` steps of the held-out day. Printed, one table: per policy and checkpoint, the share
of cells set right (the shaped reward's measure), the judge's reward (n² per solved tile, what the
leaderboard counts) per 1,000 steps and the tiles solved. ``--algo maskable`` (sb3-contrib's
MaskablePPO, the env's ``action_masks``) is the default; ``--algo ppo`` is plain PPO.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import gymnasium
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from players import evaluate as evaluate_protocol  # noqa: E402
from players.cells import PASS  # noqa: E402
from players.evaluate import solver_policy  # noqa: E402
from players.gym import CELLS_ID  # noqa: E402

TRAIN_SEEDS = ("a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8")
HELD_OUT = ("2026-06-30", "b9")


def build_days(work: Path, count: int, size: int) -> tuple[list[Path], Path, Path]:
    """(training manifests, held-out manifest, library): ``tiles daily build`` of each day not yet in
    ``work``, all over one library as a real one grows."""
    from daily.build import BuildOptions, build

    work.mkdir(parents=True, exist_ok=True)
    lib = work / "lib.sqlite"
    days = [(f"2026-06-{i + 1:02d}", TRAIN_SEEDS[i]) for i in range(count)] + [HELD_OUT]
    paths = []
    for day, seed in days:
        path = work / f"{day}.json"
        if not path.exists():
            build(
                BuildOptions(day=day, library=lib, out_dir=work, size=size, seed=bytes.fromhex(seed * 32)),
                log=lambda _line: None,
            )
        paths.append(path)
    return paths[:-1], paths[-1], lib


def evaluate(act, manifest: Path, lib: Path, steps: int, seed: int) -> dict:
    """``act(obs, mask) -> action`` for ``steps`` steps of the day (new runs as episodes end): the cells
    set (a pass or a move on a known cell sets none), the share of them set right, the judge's reward
    per 1,000 steps, the tiles solved."""
    env = gymnasium.make(CELLS_ID, manifest=str(manifest), library=str(lib), shaped=True)
    obs, info = env.reset(seed=seed)
    right = wrong = judged = solved = 0
    for _ in range(steps):
        obs, r, term, trunc, info = env.step(act(obs, info["action_mask"]))
        cell = r - (info["verdict"]["reward"] if info["judged"] and info["verdict"]["correct"] else 0)
        right, wrong = right + (cell == 1), wrong + (cell == -1)
        if info["judged"] and info["verdict"]["correct"]:
            judged, solved = judged + info["verdict"]["reward"], solved + 1
        if term or trunc:
            obs, info = env.reset()
    env.close()
    return {
        "cells set": right + wrong,
        "cells right": right / max(1, right + wrong),
        "reward/1k": 1000 * judged / steps,
        "solved": solved,
    }


def random_policy(seed: int):
    rng = np.random.default_rng(seed)

    def act(_obs, mask):
        legal = np.flatnonzero(mask[:PASS])
        return int(rng.choice(legal)) if len(legal) else PASS

    return act


def model_policy(model, masked: bool):
    if masked:
        return evaluate_protocol.model_policy(model)
    return lambda obs, _mask: int(model.predict(obs, deterministic=True)[0])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=20000, help="training steps in all")
    ap.add_argument("--eval-every", type=int, default=5000)
    ap.add_argument("--eval-steps", type=int, default=2000)
    ap.add_argument("--days", type=int, default=2, help="training days (1..8)")
    ap.add_argument("--size", type=int, default=61, help="G of every day")
    ap.add_argument("--algo", choices=("maskable", "ppo"), default="maskable")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--work", type=Path, default=Path("rl-days"))
    a = ap.parse_args(argv)
    try:
        from sb3_contrib import MaskablePPO
        from stable_baselines3 import PPO
        from stable_baselines3.common.vec_env import DummyVecEnv
    except ImportError as e:
        print(f"train_rl: {e.name} is missing: pip install -e '.[rl]'", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    train, held, lib = build_days(a.work, max(1, min(a.days, len(TRAIN_SEEDS))), a.size)
    print(
        f"days built or found in {time.perf_counter() - t0:.0f} s: train {[p.stem for p in train]}, "
        f"held out {held.stem}, G={a.size}"
    )
    venv = DummyVecEnv(
        [lambda p=p: gymnasium.make(CELLS_ID, manifest=str(p), library=str(lib), shaped=True) for p in train]
    )
    os.environ.setdefault("SB3_LOGDIR", str(a.work / "sb3-logs"))  # not a new folder in /tmp per learn
    algo = MaskablePPO if a.algo == "maskable" else PPO
    model = algo(
        "MlpPolicy",
        venv,
        n_steps=512,
        batch_size=128,
        learning_rate=3e-4,
        ent_coef=0.01,
        seed=a.seed,
        device="cpu",
        verbose=0,
    )
    rows = [
        ("random", 0, evaluate(random_policy(a.seed), held, lib, a.eval_steps, a.seed), 0.0),
        ("solver", 0, evaluate(solver_policy(), held, lib, a.eval_steps, a.seed), 0.0),
        (a.algo, 0, evaluate(model_policy(model, a.algo == "maskable"), held, lib, a.eval_steps, a.seed), 0.0),
    ]
    done, trained_s = 0, 0.0
    while done < a.steps:
        chunk = min(a.eval_every, a.steps - done)
        t = time.perf_counter()
        model.learn(chunk, reset_num_timesteps=False)
        trained_s += time.perf_counter() - t
        done += chunk
        rows.append(
            (
                a.algo,
                done,
                evaluate(model_policy(model, a.algo == "maskable"), held, lib, a.eval_steps, a.seed),
                trained_s,
            )
        )
    print(
        f"\nheld-out day {held.stem}, {a.eval_steps} steps per evaluation; training on {len(train)} days, "
        f"{a.steps} steps in {trained_s:.0f} s\n"
    )
    print(
        "| policy | trained steps | cells set | of them right | judge's reward per 1,000 steps | tiles solved "
        "| training s |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, steps, r, secs in rows:
        print(
            f"| {name} | {steps:,} | {r['cells set']:,} | {r['cells right']:.3f} | {r['reward/1k']:.1f} | "
            f"{r['solved']} | {secs:.0f} |"
        )
    venv.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
