#!/usr/bin/env bash
# The README's first command: install into .venv and run the main job — a
# daily build of a small board (G=61) on an embedded library kept in ./out/,
# synced with a local-directory remote (file://, no cloud), its settings written to ./tiles.toml by
# `tiles init` so that the README's commands run as typed afterwards, top up the stock of
# fresh tiles as the cron example does after the build — then verify the
# manifest it wrote with the referee, from the library and from the day's bundle
# (the rows that board uses: what a public mirror gets once the day is over,
# `tiles daily publish-bundle`; ./out/remote is the private library remote).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e .
# tiles.toml: this folder's settings, read by every later `tiles` command run here or below
# (`tiles config` shows them); an existing one is kept, and the environment overrides it
[ -f tiles.toml ] || .venv/bin/tiles init --library out/tiles.sqlite --remote "file://$PWD/out/remote" \
    --out out --runs out/tiles-runs.sqlite --secret-file out/secret
day="${1:-$(date -u +%F)}"
.venv/bin/tiles daily build --date "$day" --size 61 --force
.venv/bin/tiles library generate --stock --seed "$(printf '0%.0s' {1..64})"   # top up the fair rule's stock
.venv/bin/tiles library push
.venv/bin/tiles library stats
.venv/bin/tiles referee verify "out/$day.json"
.venv/bin/tiles daily bundle --date "$day" --out "out/$day.bundle.sqlite"
.venv/bin/tiles referee verify "out/$day.json" -L "out/$day.bundle.sqlite"
