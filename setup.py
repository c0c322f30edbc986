"""Build hook for the C kernel only; all other metadata lives in pyproject.toml."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "engine._kernel",
            sources=["engine/_kernel.c"],
            extra_compile_args=["-O2", "-std=c99"],
        )
    ]
)
