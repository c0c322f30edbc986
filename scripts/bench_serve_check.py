"""The bench's audit of a runs database after load (and after faults): every run's stored history
replayed through the judging core, and held against what the players were told.

- **replay**: each run's stored moves, in id order, judged again by ``Judge.judge_move`` (the core
  ``Judge.record`` runs for every move) from an empty run; a stored verdict that differs is a
  *replay mismatch*.
- **lost**: a verdict a player was told (an acknowledged move) that the database does not hold.
- **extra**: a stored move no player was told of: a batch judged twice (a retry not answered from
  its Idempotency-Key), or one whose answer never came back (counted apart: ``unanswered`` calls).
- **scored twice**: a tile correct more than once in one run.
- **score**: a run's score as the service gave it at the end differs from the sum of its verdicts.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from referee.runsdb import opened


@dataclass
class Audit:
    runs: int = 0
    stored: int = 0
    told: int = 0
    lost: int = 0
    extra: int = 0
    twice: int = 0
    mismatch: int = 0
    score: int = 0
    notes: list = field(default_factory=list)

    def ok(self) -> bool:
        return not (self.lost or self.extra or self.twice or self.mismatch or self.score)

    def line(self) -> str:
        return (
            f"{self.runs} runs, {self.stored} moves stored, {self.told} told: lost {self.lost}, "
            f"scored twice {self.twice}, extra {self.extra}, replay mismatches {self.mismatch}, "
            f"score mismatches {self.score}"
        )


def audit(target, judge, runs: dict) -> Audit:
    """Audit the runs database ``target`` (file or URL) of one day (``judge``: its ``Judge``) against
    ``runs`` (``Recorder.runs``: run -> (verdicts told, score read or None))."""
    a = Audit()
    with opened(target) as db:
        stored_runs = {r for (r,) in db.read("SELECT run FROM runs")}
        for run in sorted(stored_runs | set(runs)):  # one run at a time: a soak stores millions of moves
            check_run(
                a,
                judge,
                run,
                db.read("SELECT tile, cells, accepted, correct, reward FROM moves WHERE run = ? ORDER BY id", (run,)),
                *runs.get(run, ((), None)),
            )
    return a


def check_run(a: Audit, judge, run: str, stored: list, told, score) -> None:
    """Add one run's findings to ``a``: its ``stored`` moves replayed, held against the verdicts ``told``
    and the ``score`` read at its end (None if not read)."""
    a.runs += 1
    a.stored += len(stored)
    solved: set[int] = set()
    got, reward, rewarded = Counter(), 0, Counter()
    for tile, cells, acc, cor, rew in stored:
        v = judge.judge_move({"tile": tile, "cells": cells}, solved)
        if (v["accepted"], v["correct"], v["reward"]) != (bool(acc), bool(cor), rew):
            a.mismatch += 1
        got[tile << 2 | int(bool(acc)) << 1 | int(bool(cor))] += 1
        if cor:
            rewarded[tile] += 1
        reward += rew
    a.twice += sum(c - 1 for c in rewarded.values() if c > 1)
    want = Counter(told)
    a.told += len(told)
    a.lost += sum((want - got).values())
    a.extra += sum((got - want).values())
    if score is not None and score["reward"] != reward:
        a.score += 1
        if len(a.notes) < 5:
            a.notes.append(f"{run}: score {score['reward']} vs stored {reward}")
