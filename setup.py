"""Build hook for the C kernels (engine._kernel, tilelib._sym, stitcher._core) only; all other metadata lives in pyproject.toml."""

import platform

from setuptools import Extension, setup

# POPCNT is in every x86-64 CPU since 2008-2009; without the flag gcc calls a slow libgcc helper.
_arch = ["-mpopcnt"] if platform.machine().lower() in ("x86_64", "amd64") else []

setup(
    ext_modules=[
        Extension(
            "engine._kernel",
            sources=["engine/_kernel.c", "engine/_count.c", "engine/_ladder.c"],
            depends=["engine/_kernel.h"],
            extra_compile_args=["-O2", "-std=c99", *_arch],
        ),
        Extension(
            "tilelib._sym",
            sources=["tilelib/_sym.c"],
            extra_compile_args=["-O2", "-std=c99", *_arch],
        ),
        Extension(
            "stitcher._core",
            sources=["stitcher/_core.c", "stitcher/_index.c", "stitcher/_check.c"],
            depends=["stitcher/_core.h"],
            extra_compile_args=["-O2", "-std=c99", *_arch],
        ),
    ]
)
