#!/usr/bin/env bash
# The README's first command: install into .venv and run the main job on a
# small board with an embedded (local, no-cloud) library.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e .
export TILES_LIBRARY="${TILES_LIBRARY:-$PWD/out/tiles.sqlite}"
mkdir -p out
.venv/bin/tiles library init
.venv/bin/tiles library stats
