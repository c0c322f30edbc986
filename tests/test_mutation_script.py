"""The mutation script's own arithmetic (scripts/mutation.py): what it counts as killed, explained and
worth a second, lone run. mutmut itself runs in the script, not here (minutes per module)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def script(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))  # as when it runs: its folder on the path
    spec = importlib.util.spec_from_file_location("mutation_script", ROOT / "scripts" / "mutation.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "mutation_script", mod)  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def test_counts_score_and_what_is_run_again(monkeypatch):
    s = script(monkeypatch)
    m = s.Module(
        "x.py",
        status={"k": "killed", "t": "timeout", "u": "survived", "e": "survived", "stale": "survived", "n": "no tests"},
        diffs={"u": "-a\n+b", "e": "-c\n+d", "stale": "-e\n+f", "n": "-g\n+h"},
    )
    equivalent = {"e": {"why": "same", "diff": "-c\n+d"}, "stale": {"why": "old", "diff": "-e\n+OLD"}}
    assert m.counts(equivalent) == {"made": 6, "killed": 2, "equivalent": 1, "survived": 3}
    assert m.score(equivalent) == 2 / 5
    # timeouts and the survivors no reason explains (a reason for another diff explains nothing)
    assert s.doubted(m, equivalent) == ["n", "stale", "t", "u"]
    assert s.doubted(s.Module("y.py", status={"k": "killed"}), {}) == []
