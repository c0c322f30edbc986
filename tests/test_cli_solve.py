"""`tiles solve`: JSON shape, unique solutions of hand-written puzzles checked against the rules
independently, --k, --file with comments, and malformed input rejected with exit 2 and no output."""

from __future__ import annotations

import json

import pytest
from cli_support import run_tiles
from engine_brute import brute_solutions, line_valid

from tilelib.bits import Puzzle

# Hand-written solutions; the puzzles blank cells of them in a fixed order while the brute-force
# enumerator (not the engine) still finds one solution. Both facts are re-checked below.
SOL6 = "001011010101101010110100011001100110"
HAND6 = "........0.0......0..0.00.1.......11."
SOL4 = "0011100101101100"
HAND4 = "....1......011.."


def obeys_rules(s: str) -> bool:
    """Independent rules check on a 0/1 string: balance, no three in a row, distinct lines."""
    n = int(len(s) ** 0.5)
    rows = [int(s[i * n : (i + 1) * n], 2) for i in range(n)]
    cols = [int("".join(s[r * n + c] for r in range(n)), 2) for c in range(n)]
    return all(line_valid(x, n) for x in rows + cols) and len(set(rows)) == n == len(set(cols))


def test_hand_puzzles_are_what_the_test_claims():
    for sol, hand in ((SOL6, HAND6), (SOL4, HAND4)):
        assert obeys_rules(sol)
        assert all(h in (".", s) for h, s in zip(hand, sol, strict=True))
        p = Puzzle.parse(hand)
        truth = brute_solutions(p.n, *p.row_masks())
        assert len(truth) == 1


@pytest.mark.parametrize("sol,hand", [(SOL6, HAND6), (SOL4, HAND4)])
def test_solve_prints_the_unique_solution(sol, hand):
    r = run_tiles("solve", "--givens", hand)
    assert r.returncode == 0
    out = r.stdout.strip().splitlines()
    assert len(out) == 1
    doc = json.loads(out[0])
    assert list(doc) == ["n", "count", "solutions", "ladder", "bifurcations", "nodes"]
    assert doc["n"] == len(sol) ** 0.5 and doc["count"] == 1 and doc["solutions"] == [sol]
    assert 0 <= doc["ladder"] <= 4 and doc["bifurcations"] >= 0 and doc["nodes"] >= 1


def test_k_caps_the_count_and_solutions_obey_the_rules():
    r = run_tiles("solve", "--givens", "." * 36, "--k", "5")
    assert r.returncode == 0
    doc = json.loads(r.stdout)
    assert doc["count"] == 5 and len(set(doc["solutions"])) == 5
    assert all(obeys_rules(s) for s in doc["solutions"]) and doc["ladder"] == 5


def test_file_skips_blank_lines_and_comments(tmp_path):
    f = tmp_path / "p.txt"
    f.write_text(f"# two puzzles\n\n{HAND6}\n   \n# and a contradictory one\n{HAND4}\n000{'.' * 33}\n")
    r = run_tiles("solve", "--file", str(f))
    assert r.returncode == 0
    docs = [json.loads(line) for line in r.stdout.strip().splitlines()]
    assert [d["n"] for d in docs] == [6, 4, 6]
    assert [d["solutions"] for d in docs] == [[SOL6], [SOL4], []]
    assert docs[2]["count"] == 0 and docs[2]["ladder"] == 5


@pytest.mark.parametrize("line", ["0..1...", "01x." * 9, "." * 35, "0" * 9])
def test_malformed_line_exit_2_names_the_line_and_prints_nothing(tmp_path, line):
    f = tmp_path / "p.txt"
    f.write_text(f"# ok first\n{HAND6}\n\n{line}\n{HAND4}\n")
    r = run_tiles("solve", "--file", str(f))
    assert r.returncode == 2
    assert r.stdout == ""
    assert "line 4" in r.stderr and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "argv",
    [
        ["solve"],  # neither --givens nor --file
        ["solve", "--givens", HAND4, "--file", "x.txt"],  # both
        ["solve", "--givens", "01."],  # not n*n
        ["solve", "--givens", HAND4, "--k", "0"],
        ["solve", "--givens", HAND4, "--n", "6"],  # --n disagrees with the string
        ["solve", "--file", "/nonexistent/puzzles.txt"],
    ],
)
def test_bad_arguments_exit_2(argv):
    r = run_tiles(*argv)
    assert r.returncode == 2
    assert r.stdout == "" and r.stderr.startswith("tiles: error:")
