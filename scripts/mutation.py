"""Mutation testing of the modules where a wrong answer is silent, module by module, with mutmut.

    .venv/bin/pip install -e '.[mutation]'
    .venv/bin/python scripts/mutation.py                      # every module of MODULES, ~30 min on 2 cores
    .venv/bin/python scripts/mutation.py tilelib/spent.py     # one module
    .venv/bin/python scripts/mutation.py --report-only        # the report from the last runs' results

For each module, a copy of the tree (the files git knows, and the built C extensions) gets a
``[tool.mutmut]`` section that mutates that module only and runs only that module's tests (``MODULES``:
fast, in-process tests; mutmut's trampolines are not seen by a test's subprocess). mutmut makes the
mutants, runs the tests against each (two at once) and records each verdict; every timeout and every
survivor no reason explains is run once more, alone, and that verdict kept. The script then writes
``docs/mutation.md``: per module, mutants made, killed (a test failed or timed out), survived, and
those mutmut found no test for; every survivor with its diff and, when it is in
``tests/data/mutation_equivalent.toml``, why it is equivalent (a change no caller can see: an SQL
keyword's case, a name SQLite compares without case). A listed reason holds only while the mutant's
diff is the one recorded beside it.

Exit 1 when a module's score (killed over mutants not listed as equivalent) is below ``FLOOR`` or a
survivor is unexplained. Results per module stay in ``.mutation/<module>/`` (git ignores it).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from clean_copy import clean_copy  # scripts/clean_copy.py, beside this script

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".mutation"
REPORT = ROOT / "docs" / "mutation.md"
EQUIVALENT = ROOT / "tests" / "data" / "mutation_equivalent.toml"
FLOOR = 0.85

# module -> the tests that judge it (in process, quick); the order is the report's
MODULES: dict[str, list[str]] = {
    "tilelib/spent.py": ["tests/test_spent_rule.py", "tests/test_spent_ledger.py", "tests/test_schema_proof.py"],
    "referee/service/ranking.py": ["tests/test_ranking.py"],
    "referee/service/hotpath.py": ["tests/test_serve_hotpath.py"],
    "tilelib/merge.py": [
        "tests/test_merge_rules.py",
        "tests/test_remote_merge.py",
        "tests/test_schema_proof.py",
        "tests/test_trust_rows.py",
    ],
    "referee/judge.py": ["tests/test_referee_judge.py"],
    "referee/closure.py": ["tests/test_referee_closure.py"],  # with a built G = 61 board
    "referee/verify.py": ["tests/test_referee_verify.py"],
    "daily/export.py": ["tests/test_daily_export.py"],
    "tilelib/audit.py": ["tests/test_audit.py", "tests/test_audit_batch.py"],
    "tilelib/schema.py": [
        "tests/test_schema_proof.py",
        "tests/test_schema_report.py",
        "tests/test_sqltokens.py",
        "tests/test_schema_fuzz.py",
    ],
}
KILLED = {"killed", "timeout"}
NO_TESTS = "no tests"


@dataclass
class Module:
    """One module's verdicts: mutant name -> status, and each survivor's diff."""

    path: str
    status: dict[str, str] = field(default_factory=dict)
    diffs: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    def counts(self, equivalent: dict[str, dict]) -> dict[str, int]:
        made = len(self.status)
        killed = sum(s in KILLED for s in self.status.values())
        eq = sum(1 for name in self.survivors() if self.explained(name, equivalent))
        return {"made": made, "killed": killed, "equivalent": eq, "survived": made - killed - eq}

    def survivors(self) -> list[str]:
        return sorted(n for n, s in self.status.items() if s not in KILLED)

    def explained(self, name: str, equivalent: dict[str, dict]) -> bool:
        entry = equivalent.get(name)
        return bool(entry) and entry.get("diff", "").strip() == self.diffs.get(name, "").strip()

    def score(self, equivalent: dict[str, dict]) -> float:
        c = self.counts(equivalent)
        counted = c["made"] - c["equivalent"]
        return 1.0 if counted == 0 else c["killed"] / counted


def configure(tree: Path, module: str, tests: list[str]) -> None:
    """The copy's pyproject.toml gets the one [tool.mutmut] section of this module."""
    packages = sorted({p.parent.name for p in tree.glob("*/__init__.py")} - {"tests", "scripts"})
    section = {
        "source_paths": [module.split("/")[0] + "/"],
        "only_mutate": [module],
        "pytest_add_cli_args_test_selection": tests,
        "pytest_add_cli_args": ["-p", "no:cacheprovider", "-m", "not slow"],
        "also_copy": ["tests/", "schema.sql", "setup.py", *[f"{p}/" for p in packages]],
        "timeout_multiplier": 2.0,
        "timeout_constant": 2.0,
    }
    lines = ["", "[tool.mutmut]"] + [f"{k} = {json.dumps(v)}" for k, v in section.items()]
    with (tree / "pyproject.toml").open("a", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")


def mutmut(tree: Path, *args: str) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).parent / "mutmut"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TILES_")} | {"TILES_CONFIG": ""}
    return subprocess.run([str(exe), *args], cwd=tree, capture_output=True, text=True, env=env)


def _tree(module: str) -> Path:
    """The copy of the tree a module's mutants live in."""
    return WORK / module.replace("/", "__")


def run_module(module: str, equivalent: dict[str, dict]) -> Module:
    tree = _tree(module)
    clean_copy(tree, extensions=True)
    configure(tree, module, MODULES[module])
    t0 = time.monotonic()
    run = mutmut(tree, "run", "--max-children", "2")
    if run.returncode != 0:
        raise SystemExit(f"mutmut run failed for {module}:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}")
    got = read_results(tree, module)
    doubtful = doubted(got, equivalent)
    if doubtful:  # each again, alone (``doubted``)
        mutmut(tree, "run", "--max-children", "1", *doubtful)
        got = read_results(tree, module)
    seconds = time.monotonic() - t0
    got.seconds = seconds
    (tree / "seconds").write_text(f"{seconds:.1f}\n")
    return got


def doubted(got: Module, equivalent: dict[str, dict]) -> list[str]:
    """The verdicts of a full run worth a second, lone run: a timeout (on a loaded machine a slow test
    can outlast mutmut's limit, and a timeout counts as killed) and a survivor no reason explains
    (mutmut's full run now and then calls survived a mutant that its tests, run alone, kill)."""
    return sorted(
        name
        for name, status in got.status.items()
        if status == "timeout" or (status not in KILLED and not got.explained(name, equivalent))
    )


def read_results(tree: Path, module: str) -> Module:
    """The verdicts mutmut stored for the copy ``tree``, and each survivor's diff."""
    res = mutmut(tree, "results", "--all", "true")
    got = Module(module)
    for line in res.stdout.splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if sep and name:
            got.status[name] = status
    for name in got.survivors():
        shown = mutmut(tree, "show", name).stdout
        got.diffs[name] = "\n".join(
            line for line in shown.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---"))
        )
    seconds = tree / "seconds"
    got.seconds = float(seconds.read_text()) if seconds.exists() else 0.0
    return got


def load_equivalent() -> dict[str, dict]:
    if not EQUIVALENT.exists():
        return {}
    return tomllib.loads(EQUIVALENT.read_text("utf-8"))


def report(modules: list[Module], equivalent: dict[str, dict]) -> str:
    lines = [
        "# Mutation testing",
        "",
        "<!-- Written by scripts/mutation.py from mutmut's results; rerun it, do not edit. -->",
        "",
        f"mutmut over the modules where a wrong answer is silent, each against its own tests (the script's "
        f"`MODULES`). Score: mutants killed (a test failed, or the tests ran past their time) over the "
        f"mutants not explained as equivalent (`tests/data/mutation_equivalent.toml`); the floor is "
        f"{FLOOR:.0%}.",
        "",
        "| module | tests | mutants | killed | equivalent | survived | score | seconds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for m in modules:
        c = m.counts(equivalent)
        tests = ", ".join(f"`{t.removeprefix('tests/')}`" for t in MODULES[m.path])
        lines.append(
            f"| `{m.path}` | {tests} | {c['made']} | {c['killed']} | {c['equivalent']} | {c['survived']} | "
            f"{m.score(equivalent):.1%} | {m.seconds:.0f} |"
        )
    for m in modules:
        survivors = m.survivors()
        if not survivors:
            continue
        lines += ["", f"## `{m.path}`: {len(survivors)} not killed", ""]
        for name in survivors:
            why = equivalent.get(name, {}).get("why") if m.explained(name, equivalent) else None
            head = f"- `{name}` ({m.status[name]})" + (f": equivalent, {why}" if why else ": **unexplained**")
            lines.append(head)
            lines += ["", "  ```diff", *[f"  {d}" for d in m.diffs.get(name, "").splitlines()], "  ```"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help="modules to run (default: every one of MODULES)")
    parser.add_argument("--report-only", action="store_true", help="write the report from the stored results")
    args = parser.parse_args(argv)
    unknown = [m for m in args.modules if m not in MODULES]
    if unknown:
        parser.error(f"not in MODULES: {', '.join(unknown)}")
    equivalent = load_equivalent()
    ran: dict[str, Module] = {}
    for module in args.modules or ([] if args.report_only else list(MODULES)):
        print(f"mutation: {module} ...", flush=True)
        ran[module] = m = run_module(module, equivalent)
        print(f"mutation: {module}: {len(m.status)} mutants in {m.seconds:.0f} s", flush=True)
    done = [  # the modules run now as they came back; the others from their stored results
        ran[module] if module in ran else read_results(_tree(module), module)
        for module in MODULES
        if (_tree(module) / "mutants").is_dir()
    ]
    REPORT.write_text(report(done, equivalent), "utf-8")
    print(f"wrote {REPORT.relative_to(ROOT)}")
    bad = [m.path for m in done if m.score(equivalent) < FLOOR or m.counts(equivalent)["survived"]]
    for m in done:
        c = m.counts(equivalent)
        print(
            f"{m.path:32} {c['made']:5} made {c['killed']:5} killed {c['survived']:4} survived "
            f"{m.score(equivalent):7.1%}"
        )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
