"""The golden nightly builds of issue 34: for each packer, three nights at G=301 on one library
from empty, and what they leave behind — each night's manifest and the library's rows.

The golden files in ``tests/data/golden_build/`` were made by the code before the refactor of the
stitch state and the build value (commit ``97fc739``, tiles 0.6.1) and re-made for GENERATOR_VERSION 5
(completions decided by the C search: other grids, so other drained tiles; every change between
left them byte for byte), and their ``meta`` digests once more when the check's watermark
(``verified:rowids``) gained the spent table's rowid (the boards and every other table unchanged) with

    .venv/bin/python tests/golden_build.py tests/data/golden_build

and ``tests/test_golden_builds.py`` rebuilds the same nights and compares. Per packer and night:
``<packer>/<day>.json.gz`` is the manifest (``gzip -9 -n``), and ``<packer>/<day>.rows.json`` the
library's rows after that night as one SHA-256 and a row count per table (the dump is
``library_rows``: every row in primary-key order, BLOBs in hex).

Two kinds of values are not the board's and are taken out of both sides: the wall clock (the
``created``, ``first_seen`` and ``last_seen`` columns; no build reads them back) and the
library's random ``library_id``. The release string ``build.versions.tiles`` is replaced by
``<release>`` and each board's digest (sha256 of its manifest text, which holds that string) by
``<board:DAY>``, so that a release bump that builds the same boards still matches.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import sqlite3
import sys
from pathlib import Path

PACKERS = ("big-first", "grown", "bands", "substitution", "islands")
DAYS = ("2026-11-01", "2026-11-02", "2026-11-03")
SIZE = 301
SECRET = "golden-build-secret"
GOLDEN = Path(__file__).parent / "data" / "golden_build"
# Columns that hold the wall clock, per table; no board depends on them.
CLOCK = {"tiles": {"created"}, "misses": {"first_seen", "last_seen"}, "manifests": {"created"}, "spent": {"created"}}
ORDER = {"meta": "key", "tiles": "hash", "misses": "id", "manifests": "day", "spent": "solution, board"}


def build_args(lib: Path, out: Path, packer: str, day: str) -> list[str]:
    """The ``tiles`` arguments of one golden night (two stitch workers, the same board for any
    count; every other option its default: profile human, reuse fresh)."""
    return [
        "daily",
        "build",
        "--date",
        day,
        "--size",
        str(SIZE),
        "--packer",
        packer,
        "--library",
        str(lib),
        "--out",
        str(out),
        "--workers",
        "2",
    ]


def normalised_manifest(text: str) -> str:
    """The manifest text with its release string (``build.versions.tiles``) as ``<release>``."""
    release = json.loads(text)["build"]["versions"]["tiles"]
    return text.replace(f'"tiles":"{release}"', '"tiles":"<release>"')


def _cell(value) -> object:
    return value.hex() if isinstance(value, bytes) else value


def library_rows(lib: Path) -> dict[str, dict]:
    """{table: {"rows": count, "sha256": digest of its normalised rows}} of the library file."""
    conn = sqlite3.connect(f"file:{lib}?mode=ro", uri=True)
    try:
        boards = {
            hashlib.sha256(text.encode()).hexdigest(): f"<board:{day}>"
            for day, text in conn.execute("SELECT day, json FROM manifests")
        }

        def norm(table: str, col: str, value):
            value = _cell(value)
            if table == "manifests" and col == "json":
                value = normalised_manifest(value)
            if isinstance(value, str):
                for digest, name in boards.items():
                    value = value.replace(digest, name)
            return value

        out = {}
        for table, order in ORDER.items():
            cur = conn.execute(f"SELECT * FROM {table} ORDER BY {order}")
            cols = [d[0] for d in cur.description]
            keep = [i for i, c in enumerate(cols) if c not in CLOCK.get(table, ())]
            h, count = hashlib.sha256(json.dumps([cols[i] for i in keep]).encode()), 0
            for row in cur:
                if table == "meta" and row[0] == "library_id":
                    continue
                h.update(json.dumps([norm(table, cols[i], row[i]) for i in keep]).encode() + b"\n")
                count += 1
            out[table] = {"rows": count, "sha256": h.hexdigest()}
        return out
    finally:
        conn.close()


def write(folder: Path) -> None:
    """Build every golden night with this checkout's code and write its files under ``folder``."""
    import tempfile
    import time

    sys.path.insert(0, str(Path(__file__).parent))
    from cli_support import run_tiles

    for packer in PACKERS:
        with tempfile.TemporaryDirectory() as tmp:
            lib, out = Path(tmp) / "lib.sqlite", Path(tmp) / "out"
            for day in DAYS:
                t0 = time.perf_counter()
                r = run_tiles(*build_args(lib, out, packer, day), env={"TILES_SECRET": SECRET})
                if r.returncode != 0:
                    raise SystemExit(f"{packer} {day}: exit {r.returncode}: {r.stderr[-2000:]}")
                dest = folder / packer
                dest.mkdir(parents=True, exist_ok=True)
                text = (out / f"{day}.json").read_text()
                (dest / f"{day}.json.gz").write_bytes(gzip.compress(text.encode(), 9, mtime=0))
                (dest / f"{day}.rows.json").write_text(json.dumps(library_rows(lib), indent=1, sort_keys=True) + "\n")
                print(f"{packer:13} {day}  {time.perf_counter() - t0:6.1f} s", flush=True)


if __name__ == "__main__":
    write(Path(sys.argv[1]))
