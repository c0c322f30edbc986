"""The evaluation protocol (``players.evaluate``) as a command: policies played on the same N fresh
boards of a split, each with its mean and 95% interval of reward fraction, tiles per 1,000 steps,
requests per tile and success.

    python scripts/evaluate.py                                   # random and solver, 20 test boards
    pip install -e '.[rl]'; python scripts/evaluate.py --policies random,solver,maskable --train-steps 100000

``maskable`` is sb3-contrib's MaskablePPO: loaded from ``--model`` if that file exists, else trained
for ``--train-steps`` on fresh boards of the ``train`` split (shaped reward; ``boards=``) and saved
there. ``imitation`` is ``players.imitation``'s network, trained on the reference solver's answers on
the train split's boards (or loaded from ``--imitation-model``); it reads the forced-cell hints, so it
plays with them whatever ``--hints`` says, and a line after the table gives the share of the played
boards' tiles it fills right, by n. Boards are ``--size`` cells a side; every policy plays board k
of ``--split`` for k in 0..``--seeds``-1, at most ``--steps`` steps each. Prints one markdown table.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from players.boards import Boards  # noqa: E402
from players.evaluate import Report, model_policy, play, random_policy, solver_policy  # noqa: E402
from players.imitation import Training  # noqa: E402


def trained(model: Path, size: int, steps: int, seed: int, hints: bool):
    """MaskablePPO loaded from ``model``, or trained on the train split's fresh boards and saved there."""
    import gymnasium
    from sb3_contrib import MaskablePPO

    from players.gym import CELLS_ID

    if model.exists():
        return MaskablePPO.load(model, device="cpu"), 0.0
    env = gymnasium.make(CELLS_ID, boards=Boards(size=size, split="train"), shaped=True, max_steps=2000, hints=hints)
    t0 = time.perf_counter()
    agent = MaskablePPO("MlpPolicy", env, seed=seed, device="cpu", verbose=0).learn(steps)
    took = time.perf_counter() - t0
    model.parent.mkdir(parents=True, exist_ok=True)
    agent.save(model)
    env.close()
    return agent, took


def imitated(model: Path, size: int, how, log) -> tuple[object, float]:
    """The imitation learner loaded from ``model``, or trained (``how``) on the train split and saved there."""
    import torch

    from players import imitation

    net = imitation.make_net(how.channels, how.blocks)
    if model.exists():
        net.load_state_dict(torch.load(model))
        return net.eval(), 0.0
    t0 = time.perf_counter()
    examples = imitation.tile_examples(Boards(size=size, split="train"), range(how.boards))
    net = imitation.train(examples, how, log=log)
    took = time.perf_counter() - t0
    model.parent.mkdir(parents=True, exist_ok=True)
    torch.save(net.state_dict(), model)
    return net.eval(), took


def row(name: str, report: Report, note: str) -> str:
    return (
        f"| {name} | {report.reward_fraction.text()} | {report.tiles_per_kstep.text(1)} | "
        f"{report.requests_per_tile.text(2)} | {report.success.text(2)} | {note} |"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--policies", default="random,solver")
    ap.add_argument("--split", default="test", choices=("train", "validation", "test"))
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--size", type=int, default=61)
    ap.add_argument(
        "--profile",
        default=None,
        help="The boards' difficulty profile (tiles daily build --profile: a preset or a JSON table; "
        "default: the split library's own mix).",
    )
    ap.add_argument("--steps", type=int, default=2000, help="Most steps per board.")
    ap.add_argument("--model", type=Path, default=Path("out/maskable.zip"))
    ap.add_argument("--imitation-model", type=Path, default=Path("out/imitation.pt"))
    ap.add_argument(
        "--imitation-boards", type=int, default=Training.boards, help="Train boards whose tiles imitation learns."
    )
    ap.add_argument("--imitation-epochs", type=int, default=Training.epochs)
    ap.add_argument("--train-steps", type=int, default=100_000)
    ap.add_argument(
        "--hints", action="store_true", help="Observations carry the forced-cell planes (players.cells hints)."
    )
    a = ap.parse_args(argv)
    boards = Boards(size=a.size, profile=a.profile, split=a.split)
    seeds = range(a.seeds)
    hinted = ", observations with hints" if a.hints else ""
    profile = f", profile {a.profile}" if a.profile else ""
    print(f"{a.seeds} boards of the {a.split} split, G = {a.size}{profile}, at most {a.steps} steps each{hinted}\n")
    print("| policy | reward fraction | tiles per 1,000 steps | requests per tile | success | note |")
    print("|---|---|---|---|---|---|")
    after = []
    for name in a.policies.split(","):
        note, hints = "", a.hints
        if name == "random":
            policy = random_policy(0)
        elif name == "solver":
            policy = solver_policy()
        elif name == "maskable":
            model, took = trained(a.model, a.size, a.train_steps, seed=0, hints=a.hints)
            policy = model_policy(model)
            note = f"{a.train_steps:,} steps on the train split in {took:.0f} s" if took else f"loaded {a.model}"
        elif name == "imitation":
            from players import imitation

            how = Training(boards=a.imitation_boards, epochs=a.imitation_epochs)
            net, took = imitated(a.imitation_model, a.size, how, log=lambda line: print(f"<!-- {line} -->"))
            policy, hints = imitation.policy(net), True
            note = f"trained on {how.boards} train boards' tiles in {took:.0f} s" if took else ""
            note = note or f"loaded {a.imitation_model}"
            rates = imitation.solve_rates(net, imitation.tile_examples(boards, seeds, a.steps))
            after.append(
                "imitation, tiles of these boards filled right from the state shown: "
                + ", ".join(f"n = {n} {r}/{t} ({r / t:.0%})" for n, (t, r) in rates.items())
            )
        else:
            print(f"evaluate.py: unknown policy {name!r} (random, solver, maskable, imitation)", file=sys.stderr)
            return 2
        t0 = time.perf_counter()
        report = play(policy, boards, seeds, a.steps, hints=hints)
        print(row(name, report, (note + "; " if note else "") + f"played in {time.perf_counter() - t0:.0f} s"))
    for line in after:
        print(f"\n{line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
