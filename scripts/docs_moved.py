"""Where did each section of a split document go?

Reads the old document (a path at a git revision, or a saved copy), takes its ``##`` and ``###``
headings, and for each one names the new file(s) that hold a heading with the same text, at any
level and with or without a number in front (``# 0007. Stitcher (issue 6)`` holds ``## Stitcher
(issue 6)``). Prints a markdown table; exits 1 if any heading is found in no new file.

    python scripts/docs_moved.py                                  # docs/DECISIONS.md -> docs/decisions/
    python scripts/docs_moved.py --old BENCHMARKS.md --new docs/benchmarks/ --rev REV
    python scripts/docs_moved.py --old-file saved.md --new docs/decisions/ --check-body

``--rev`` defaults to the parent of the first commit that added a file under the first ``--new``
path (the document as it was before the split), or HEAD when nothing there is committed yet.
``--check-body`` also checks that every non-blank line of each old section is a line of a file its
heading maps to (link targets ignored, since a moved file's relative links change).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
NUMBERED = re.compile(r"^\d+[.:)]?\s+")
LINK_TARGET = re.compile(r"\]\([^)]*\)")
FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass
class Section:
    level: int
    title: str
    line: int  # 1-based line of the heading in the old file
    body: list[str] = field(default_factory=list)


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout


def default_rev(new: str) -> str:
    """The parent of the oldest commit that added a file under ``new``, else HEAD."""
    added = git("log", "--diff-filter=A", "--format=%H", "--", new).split()
    if not added:
        return "HEAD"
    return git("rev-parse", added[-1] + "^").strip()


def headings(text: str) -> list[tuple[int, int, str]]:
    """(line number, level, text) of every ATX heading outside fenced code."""
    out = []
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else HEADING.match(line)
        if match:
            out.append((number, len(match.group(1)), match.group(2)))
    return out


def sections(text: str, levels: set[int]) -> list[Section]:
    """The old file's sections at ``levels``, each with the lines up to the next heading."""
    lines = text.splitlines()
    found = [h for h in headings(text) if h[1] in levels]
    out = []
    for k, (number, level, title) in enumerate(found):
        end = found[k + 1][0] - 1 if k + 1 < len(found) else len(lines)
        out.append(Section(level, title, number, lines[number:end]))
    return out


def same_heading(candidate: str, title: str) -> bool:
    return candidate == title or NUMBERED.sub("", candidate, count=1) == title


def new_files(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for raw in paths:
        path = (ROOT / raw) if not Path(raw).is_absolute() else Path(raw)
        out.extend(sorted(path.rglob("*.md")) if path.is_dir() else [path])
    return out


def normalise(line: str) -> str:
    return LINK_TARGET.sub("]()", line).rstrip()


def missing_body(section: Section, texts: list[str]) -> list[str]:
    """Non-blank lines of the section that none of ``texts`` holds as a line."""
    held = {normalise(line) for text in texts for line in text.splitlines()}
    return [line for line in section.body if line.strip() and normalise(line) not in held]


def relative(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def cell(text: str) -> str:
    return text.replace("|", "\\|")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", default="docs/DECISIONS.md", help="the old document's path in the repository")
    parser.add_argument("--rev", help="git revision to read --old at (default: before the first --new was added)")
    parser.add_argument("--old-file", help="read the old document from this file instead of git")
    parser.add_argument("--new", nargs="+", default=["docs/decisions/"], help="new files or directories of *.md")
    parser.add_argument("--levels", default="2,3", help="heading levels of the old document to map (default 2,3)")
    parser.add_argument("--check-body", action="store_true", help="also check every section's lines were kept")
    args = parser.parse_args(argv)

    try:
        levels = {int(level) for level in args.levels.split(",")}
        if args.old_file:
            source = args.old_file
            old = Path(args.old_file).read_text(encoding="utf-8")
        else:
            rev = args.rev or default_rev(args.new[0])
            source = f"{args.old} at {rev}"
            old = git("show", f"{rev}:{args.old}")
        files = new_files(args.new)
        texts = {path: path.read_text(encoding="utf-8") for path in files}
    except (OSError, UnicodeDecodeError, ValueError, subprocess.CalledProcessError) as e:
        why = e.stderr.strip().splitlines()[-1] if isinstance(e, subprocess.CalledProcessError) and e.stderr else e
        print(f"docs_moved: {why}", file=sys.stderr)
        return 2
    titles = {path: [title for _, _, title in headings(text)] for path, text in texts.items()}

    failed = 0
    rows = []
    for section in sections(old, levels):
        holders = [path for path in files if any(same_heading(t, section.title) for t in titles[path])]
        where = ", ".join(f"`{relative(path)}`" for path in holders) or "**not found**"
        if not holders:
            failed += 1
        elif args.check_body:
            lost = missing_body(section, [texts[path] for path in holders])
            if lost:
                failed += 1
                where += f" **{len(lost)} lines not kept**, first: `{lost[0].strip()[:60]}`"
        rows.append(f"| {section.line} | {'#' * section.level} {cell(section.title)} | {where} |")

    print(f"Headings of {source} -> {', '.join(args.new)}\n")
    print("| old line | heading | now in |")
    print("|---|---|---|")
    print("\n".join(rows))
    if failed:
        print(f"\n{failed} of {len(rows)} headings not found (or their text not kept)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
