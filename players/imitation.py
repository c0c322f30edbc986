"""A learned baseline by imitation (issue 73): a small convolutional network that reads the cells env's
observation (with ``hints``) and says, for each empty cell of the shown tile, how likely its solution
value is 1; its policy sets the empty cell it is surest of to the value it believes. Trained by
supervised learning on the reference solver's answers, on the ``train`` split only.

- **Examples** (``tile_examples``): the tiles of ``train`` boards as the cells env shows them (givens
  and the cells known from solved neighbours), each with its solution — the reference solver plays
  the boards through the env to reveal them in the order a player meets them.
- **States** (``states``): from each example, ``per_tile`` seeded states with a random share of its
  empty cells set to their solution values (more for larger tiles), as the policy meets them while it
  fills a tile right; the target is the solution on the cells still empty.
- **Network** (``make_net``): ``blocks`` residual blocks of ``channels`` channels; each mixes a 3×3
  convolution with the means of its row and its column (Takuzu's balance and uniqueness rules are
  about whole lines).

``solve_rates`` measures it apart from the board: the share of a set of tiles it fills right from
the state shown, by n. torch is imported by each function that needs it (the ``rl`` extra): nothing
here is a runtime need of the project. ``scripts/evaluate.py --policies imitation`` trains and plays
it in the protocol; BENCHMARKS has what it reaches.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from players.boards import Boards
from players.cells import PASS, SIDE, observe
from players.evaluate import Policy, solver_policy

Example = tuple[str, str]  # (the shown puzzle, its solution), both n·n characters


@dataclass(frozen=True)
class Training:
    """How the imitation learner is trained: ``boards`` train boards' tiles, ``per_tile`` states a
    6×6 tile (scaled by n²/36), ``epochs`` passes, a network of ``blocks`` × ``channels``; every
    random choice from ``seed``."""

    boards: int = 60
    per_tile: int = 8
    epochs: int = 6
    channels: int = 32
    blocks: int = 6
    seed: int = 0


def tile_examples(boards: Boards, seeds: Sequence[int], steps: int = 4000) -> list[Example]:
    """Every tile the reference solver is shown on boards ``seeds`` (at most ``steps`` steps each),
    as shown before a cell of it is set, with its solution."""
    import gymnasium

    from players.cells import CellsEnv
    from players.gym import CELLS_ID

    out: list[Example] = []
    solver = solver_policy()
    with gymnasium.make(CELLS_ID, boards=boards, max_steps=steps) as env:
        u = cast(CellsEnv, env.unwrapped)
        for k in seeds:
            obs, _ = env.reset(seed=int(k))
            seen: set[tuple[int, str]] = set()
            done = False
            while not done:
                v = u._view_now()
                if not u._set and (v.tile, v.puzzle) not in seen:
                    seen.add((v.tile, v.puzzle))
                    out.append((v.puzzle, u._truth()))
                obs, _r, term, trunc, _ = env.step(solver(obs, u.action_masks()))
                done = term or trunc
    return out


def states(examples: Sequence[Example], per_tile: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(observations, targets, masks) as ``(N, 6, 16, 16)``, ``(N, 16, 16)``, ``(N, 16, 16)``: per
    example ``per_tile · n²/36`` states (module doc); the mask marks the cells whose value is learned
    (those empty in the state)."""
    rng = random.Random(seed)
    xs, ys, ms = [], [], []
    for puzzle, truth in examples:
        n = int(round(len(puzzle) ** 0.5))
        empty = [i for i, ch in enumerate(puzzle) if ch == "."]
        y = np.zeros((SIDE, SIDE), np.float32)
        y[:n, :n] = np.frombuffer(truth.encode("ascii"), np.uint8).reshape(n, n) - ord("0")
        for k in range(max(1, round(per_tile * n * n / 36))):
            share = 0.0 if k == 0 else rng.random() ** 2  # the shown state itself, then fuller ones
            fill = set(rng.sample(empty, int(share * len(empty))))
            x = observe("".join(truth[i] if i in fill else ch for i, ch in enumerate(puzzle)), True)
            xs.append(x.reshape(6, SIDE, SIDE))
            ys.append(y)
            ms.append(xs[-1][2])
    return np.stack(xs), np.stack(ys), np.stack(ms)


def make_net(channels: int, blocks: int) -> Any:
    """The network (module doc): observation planes ``(B, 6, 16, 16)`` → a logit per cell ``(B, 16, 16)``."""
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(channels, channels, 3, padding=1)
            self.row = nn.Conv2d(channels, channels, 1)
            self.col = nn.Conv2d(channels, channels, 1)

        def forward(self, x):
            lines = self.row(x.mean(3, keepdim=True)).expand_as(x) + self.col(x.mean(2, keepdim=True)).expand_as(x)
            return torch.relu(x + self.conv(x) + lines)

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inp = nn.Conv2d(6, channels, 3, padding=1)
            self.blocks = nn.Sequential(*[Block() for _ in range(blocks)])
            self.out = nn.Conv2d(channels, 1, 1)

        def forward(self, x):
            return self.out(self.blocks(torch.relu(self.inp(x))))[:, 0]

    return Net()


def train(examples: Sequence[Example], how: Training, log=print) -> Any:
    """The network trained on ``examples``' states (Adam, binary cross-entropy on the empty cells),
    one line per epoch: training loss and, on the 5% of states held out, the share of empty cells
    right and of surest cells right."""
    import torch
    from torch import nn

    torch.manual_seed(how.seed)
    x, y, m = (torch.tensor(a) for a in states(examples, how.per_tile, how.seed))
    held = max(1, len(x) // 20)
    net = make_net(how.channels, how.blocks)
    opt = torch.optim.Adam(net.parameters(), 2e-3)
    for epoch in range(how.epochs):
        net.train()
        order = torch.randperm(len(x) - held) + held
        total = 0.0
        for i in range(0, len(order), 128):
            b = order[i : i + 128]
            loss = (nn.functional.binary_cross_entropy_with_logits(net(x[b]), y[b], reduction="none") * m[b]).sum()
            loss = loss / m[b].sum().clamp(min=1)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(b)
        net.eval()
        with torch.no_grad():
            logit, yh, mh = net(x[:held]), y[:held], m[:held]
            right = ((logit > 0).float() == yh).float()
            cell = (right * mh).sum() / mh.sum()
            surest = (logit.abs() * mh - (1 - mh) * 1e9).flatten(1).argmax(1)
            top = right.flatten(1).gather(1, surest[:, None]).mean()
        log(
            f"epoch {epoch + 1}: loss {total / len(order):.4f}, held-out cells right {cell:.4f}, surest right {top:.4f}"
        )
    return net


def _logits(net: Any, obs: np.ndarray) -> np.ndarray:
    import torch

    with torch.no_grad():
        return net(torch.tensor(obs, dtype=torch.float32).reshape(1, 6, SIDE, SIDE))[0].flatten().numpy()


def surest(logit: np.ndarray, empty: np.ndarray) -> tuple[int, int]:
    """(cell, value): of the ``empty`` cells, the one whose ``logit`` is farthest from 0, and the
    value the network believes for it (the policy's choice, and ``solve_rates``')."""
    cell = int(np.where(empty, np.abs(logit), -1.0).argmax())
    return cell, int(logit[cell] > 0)


def policy(net: Any) -> Policy:
    """The surest empty cell set to the value the network believes (a pass when none is empty)."""

    def act(obs: np.ndarray, mask: np.ndarray) -> int:
        empty = mask[:PASS:2]
        if not empty.any():
            return PASS
        cell, value = surest(_logits(net, obs), empty)
        return 2 * cell + value

    return act


def solve_rates(net: Any, examples: Sequence[Example]) -> dict[int, tuple[int, int]]:
    """n → (tiles, tiles filled right to the end) when the policy fills each example from its shown
    state, one surest cell at a time, stopping at its first wrong cell."""
    tiles: Counter[int] = Counter()
    right: Counter[int] = Counter()
    for puzzle, truth in examples:
        n = int(round(len(puzzle) ** 0.5))
        grid = list(puzzle)
        while "." in grid:
            logit = _logits(net, observe("".join(grid), True)).reshape(SIDE, SIDE)[:n, :n].ravel()
            i, value = surest(logit, np.array(grid) == ".")
            if str(value) != truth[i]:
                break
            grid[i] = str(value)
        tiles[n] += 1
        right[n] += "." not in grid
    return {n: (tiles[n], right[n]) for n in sorted(tiles)}
