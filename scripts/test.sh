#!/usr/bin/env bash
# The test command (README and .ci/run): make .venv if missing, install the
# project with its test extras (this also compiles the C kernel), run pytest.
# Everything the tests need (e.g. the S3 server on loopback) they start themselves.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
exec .venv/bin/python -m pytest "$@"
