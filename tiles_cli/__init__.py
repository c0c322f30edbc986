"""The `tiles` command line: a thin Typer layer over the library packages.

Command modules parse arguments, call one library function and print. They hold
no SQL and no numpy. Errors are mapped to exit codes only in ``app.main``.
"""
