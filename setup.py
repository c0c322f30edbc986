"""Build hook for the C kernels (engine._kernel, tilelib._sym, stitcher._core) only; all other metadata lives in
pyproject.toml.

Each extension is compiled with SOURCES (its C files and headers) and SOURCE_DIGEST (their
``tilelib.native.source_digest``), which it exports, so ``tilelib.native.load_twin`` can tell a
build made from other sources (a stale one) and say so.
"""

import platform
import runpy
from pathlib import Path

from setuptools import Extension, setup

ROOT = Path(__file__).resolve().parent
# tilelib/native.py imports only the standard library, so it runs here without the package.
source_digest = runpy.run_path(str(ROOT / "tilelib" / "native.py"))["source_digest"]

TWIN_H = "tilelib/_twin.h"  # SOURCES and SOURCE_DIGEST into each module
STREAM_H = "tilelib/_stream.h"  # draws from a tilelib.rng.Stream, for the twins that draw

# POPCNT is in every x86-64 CPU since 2008-2009; without the flag gcc calls a slow libgcc helper.
_arch = ["-mpopcnt"] if platform.machine().lower() in ("x86_64", "amd64") else []


def twin(name: str, sources: list[str], depends: list[str] = ()) -> Extension:
    files = [*sources, *depends]
    return Extension(
        name,
        sources=sources,
        depends=list(depends),
        define_macros=[("TWIN_SOURCES", f'"{",".join(files)}"'), ("TWIN_DIGEST", f'"{source_digest(ROOT, files)}"')],
        extra_compile_args=["-O2", "-std=c99", *_arch],
    )


setup(
    ext_modules=[
        twin(
            "engine._kernel",
            ["engine/_kernel.c", "engine/_count.c", "engine/_ladder.c", "engine/_complete.c", "engine/_solution.c"],
            ["engine/_kernel.h", STREAM_H, TWIN_H],
        ),
        twin("tilelib._sym", ["tilelib/_sym.c"], [TWIN_H]),
        twin(
            "stitcher._core",
            ["stitcher/_core.c", "stitcher/_index.c", "stitcher/_check.c"],
            ["stitcher/_core.h", STREAM_H, TWIN_H],
        ),
    ]
)
