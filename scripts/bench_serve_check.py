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

from collections import Counter, defaultdict
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
        return (f"{self.runs} runs, {self.stored} moves stored, {self.told} told: lost {self.lost}, "
                f"scored twice {self.twice}, extra {self.extra}, replay mismatches {self.mismatch}, "
                f"score mismatches {self.score}")


def audit(target, judge, runs: dict) -> Audit:
    """Audit the runs database ``target`` (file or URL) of one day (``judge``: its ``Judge``) against
    ``runs`` (``Recorder.runs``: run -> (verdicts told, score read or None))."""
    a = Audit()
    with opened(target) as db:
        rows = db.read("SELECT run, tile, cells, accepted, correct, reward FROM moves ORDER BY id")
    by_run: dict[str, list] = defaultdict(list)
    for r in rows:
        by_run[r[0]].append(r[1:])
    a.stored = len(rows)
    a.runs = len(set(by_run) | set(runs))
    for run in set(by_run) | set(runs):
        stored = by_run.get(run, [])
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
        told, score = runs.get(run, ((), None))
        want = Counter(told)
        a.told += len(told)
        a.lost += sum((want - got).values())
        a.extra += sum((got - want).values())
        if score is not None and score["reward"] != reward:
            a.score += 1
            if len(a.notes) < 5:
                a.notes.append(f"{run}: score {score['reward']} vs stored {reward}")
    return a
