"""The analyzer: reward per batch and mean n of solved tiles over time.

A *batch* is one submission (one ``batches`` row: a contiguous range of move ids). Per run, one entry
per batch; per day, batch k of every run side by side (``day_series``) and wall-clock buckets
(``time_series``). Pure functions over rows read by ``referee.service.runs``, tested without a server.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable


def run_series(
    batches: Iterable[tuple[int, int, float]],
    solved_moves: Iterable[tuple[int, int]],
    moves_per_batch: Iterable[int],
    n_of: Callable[[int], int],
    start: float,
) -> list[dict]:
    """One entry per batch of a run, in order.

    ``batches``: (first_move, last_move, at) rows; ``solved_moves``: (move id, tile) of the correct
    moves; ``moves_per_batch``: how many moves each batch held; ``n_of``: a tile's side. Each entry:
    ``batch`` (1-based), ``t`` (seconds since ``start``), ``moves``, ``solved``, ``reward`` (Σ n²),
    ``mean_n`` of the tiles solved in the batch (null if none) and ``n_sum`` (their sides added up),
    and the running ``total_reward``, ``total_solved`` and ``mean_n_so_far``."""
    solved = sorted(solved_moves)
    out, k, tot_r, tot_s, tot_n = [], 0, 0, 0, 0
    for idx, ((first, last, at), count) in enumerate(zip(batches, moves_per_batch, strict=True), start=1):
        ns = []
        while k < len(solved) and solved[k][0] <= last:
            if solved[k][0] >= first:
                ns.append(n_of(solved[k][1]))
            k += 1
        reward = sum(n * n for n in ns)
        tot_r += reward
        tot_s += len(ns)
        tot_n += sum(ns)
        out.append(
            {
                "batch": idx,
                "t": round(at - start, 3),
                "moves": count,
                "solved": len(ns),
                "reward": reward,
                "mean_n": round(sum(ns) / len(ns), 3) if ns else None,
                "n_sum": sum(ns),
                "total_reward": tot_r,
                "total_solved": tot_s,
                "mean_n_so_far": round(tot_n / tot_s, 3) if tot_s else None,
            }
        )
    return out


def day_series(per_run: Iterable[list[dict]]) -> list[dict]:
    """Across the runs of a day, batch k of every run that made k batches: how many runs, the mean
    reward of that batch and the mean n of the tiles solved in it (weighted by tiles)."""
    acc: dict[int, list[int]] = {}
    for series in per_run:
        for e in series:
            a = acc.setdefault(e["batch"], [0, 0, 0, 0])  # runs, reward, solved, sum of n
            a[0] += 1
            a[1] += e["reward"]
            a[2] += e["solved"]
            a[3] += e["n_sum"]
    return [
        {
            "batch": k,
            "runs": a[0],
            "mean_reward": round(a[1] / a[0], 3),
            "solved": a[2],
            "mean_n": round(a[3] / a[2], 3) if a[2] else None,
        }
        for k, a in sorted(acc.items())
    ]


def time_series(per_run: Iterable[tuple[float, list[dict]]], bucket: float) -> list[dict]:
    """Across the runs of a day, wall-clock buckets of ``bucket`` seconds from the day's first batch:
    batches, reward, tiles solved and their mean n in each bucket. ``per_run``: (run start, run_series)."""
    points = [(start + e["t"], e) for start, series in per_run for e in series]
    if not points:
        return []
    t0 = min(t for t, _ in points)
    acc: dict[int, list[int]] = {}
    for t, e in points:
        a = acc.setdefault(int((t - t0) // bucket), [0, 0, 0, 0])  # batches, reward, solved, sum of n
        a[0] += 1
        a[1] += e["reward"]
        a[2] += e["solved"]
        a[3] += e["n_sum"]
    return [
        {
            "t": k * bucket,
            "batches": a[0],
            "reward": a[1],
            "solved": a[2],
            "mean_n": round(a[3] / a[2], 3) if a[2] else None,
        }
        for k, a in sorted(acc.items())
    ]
