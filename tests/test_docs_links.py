"""The docs hold together: every relative link resolves, every decision file has a status, and the
index (docs/DECISIONS.md) links every decision file once.

Links are read from README.md, CONTRIBUTING.md, BENCHMARKS.md and every docs/**/*.md; inline
(``[text](path)``, ``![alt](path)``) and reference definitions (``[id]: path``), outside code spans
and fenced blocks. Web and mail links and pure ``#anchor`` links are not checked; a ``#…`` after a
path is dropped before the path is looked up. The checker itself is checked on a small tree.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

ROOT = Path(__file__).resolve().parent.parent
DECISIONS = ROOT / "docs" / "decisions"
INDEX = ROOT / "docs" / "DECISIONS.md"

FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(?:.+?)\1")
INLINE = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)(?:\s+[\"'(][^)]*)?\)"
)
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
STATUS = re.compile(r"^Status:\s*(.*)$")


def doc_files(root: Path) -> list[Path]:
    """The documents whose links must resolve."""
    top = [root / name for name in ("README.md", "CONTRIBUTING.md", "BENCHMARKS.md")]
    return [path for path in top if path.is_file()] + sorted((root / "docs").rglob("*.md"))


def links(text: str) -> list[tuple[int, str]]:
    """(line number, target) of every link in a markdown text, outside code."""
    out = []
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        line = CODE_SPAN.sub("", line)
        targets = [m.group(1) for m in INLINE.finditer(line)]
        reference = REFERENCE.match(line)
        if reference:
            targets.append(reference.group(1))
        out.extend((number, target.strip("<>")) for target in targets)
    return out


def local_path(target: str) -> str | None:
    """The file part of a link that names a local file, or None (web, mail, pure anchor)."""
    if not target or target.startswith("#") or SCHEME.match(target):
        return None
    path = unquote(target.split("#", 1)[0].split("?", 1)[0])
    return path or None


def resolve(source: Path, path: str, root: Path) -> Path:
    return (root / path.lstrip("/")) if path.startswith("/") else (source.parent / path)


def broken_links(files: list[Path], root: Path) -> list[str]:
    """``file:line: target`` for every relative link that names no existing file or directory."""
    broken = []
    for source in files:
        for number, target in links(source.read_text(encoding="utf-8")):
            path = local_path(target)
            if path is not None and not resolve(source, path, root).exists():
                broken.append(f"{source.relative_to(root)}:{number}: {target}")
    return broken


def decision_files() -> list[Path]:
    return sorted(DECISIONS.glob("[0-9][0-9][0-9][0-9]-*.md"))


# -- the checker, checked ------------------------------------------------------------------------


def test_link_checker_reports_a_broken_link(tmp_path):
    (tmp_path / "docs" / "sub").mkdir(parents=True)
    (tmp_path / "docs" / "there.md").write_text("# there\n", encoding="utf-8")
    (tmp_path / "README.md").write_text(
        "[ok](docs/there.md) [ok too](docs/there.md#there) [web](https://example.com/x.md)\n"
        "[mail](mailto:a@b.c) [anchor](#top) ![image](docs/missing.png)\n",
        encoding="utf-8",
    )
    (tmp_path / "docs" / "sub" / "a.md").write_text(
        "[up](../there.md) [root](/docs/there.md) `[code](nowhere.md)`\n"
        "```\n[fenced](nowhere.md)\n```\n"
        "[gone](../../gone.md#part)\n"
        "[ref]: ./nothing.md\n",
        encoding="utf-8",
    )

    found = broken_links(doc_files(tmp_path), tmp_path)

    assert found == [
        "README.md:2: docs/missing.png",
        "docs/sub/a.md:5: ../../gone.md#part",
        "docs/sub/a.md:6: ./nothing.md",
    ]


def test_links_are_read_with_titles_and_parentheses():
    assert links('[a](x.md "title") [b](<y z.md>) [c](f(1).md) [[n]](w.md)') == [
        (1, "x.md"),
        (1, "y z.md"),
        (1, "f(1).md"),
        (1, "w.md"),
    ]


# -- the repository ------------------------------------------------------------------------------


def test_every_relative_link_resolves():
    broken = broken_links(doc_files(ROOT), ROOT)
    assert not broken, "links to no file:\n" + "\n".join(broken)


def test_every_decision_has_a_status():
    files = decision_files()
    assert files, "no decision files in docs/decisions/"
    problems = []
    for path in files:
        head = path.read_text(encoding="utf-8").splitlines()[:5]
        values = [m.group(1) for m in map(STATUS.match, head) if m]
        if not values:
            problems.append(f"{path.name}: no 'Status:' line among its first 5 lines")
            continue
        value = values[0]
        if not value.startswith(("accepted", "superseded by")):
            problems.append(f"{path.name}: status {value!r} is neither 'accepted…' nor 'superseded by…'")
        for _, target in links(value):
            local = local_path(target)
            if local is None or not resolve(path, local, ROOT).is_file():
                problems.append(f"{path.name}: superseded by {target}, which is no file")
    assert not problems, "\n".join(problems)


def test_decision_files_are_numbered_one_by_one():
    numbers = [int(path.name[:4]) for path in decision_files()]
    assert numbers == list(range(1, len(numbers) + 1))
    stray = [p.name for p in DECISIONS.glob("*.md") if p not in decision_files()]
    assert not stray, f"not named NNNN-title.md: {stray}"


def test_the_index_links_every_decision_once():
    linked = []
    for _, target in links(INDEX.read_text(encoding="utf-8")):
        local = local_path(target)
        if local is None:
            continue
        path = resolve(INDEX, local, ROOT).resolve()
        if path.parent == DECISIONS.resolve():
            linked.append(path.name)
    expected = [path.name for path in decision_files()]
    twice = sorted({name for name in linked if linked.count(name) > 1})
    assert not twice, f"linked more than once from docs/DECISIONS.md: {twice}"
    assert sorted(linked) == expected, (
        f"not in the index: {sorted(set(expected) - set(linked))}; "
        f"in the index but no file: {sorted(set(linked) - set(expected))}"
    )
