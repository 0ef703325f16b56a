#!/usr/bin/env bash
# CI steps beyond `make test` and `make asan`, called at the end of .ci/run:
# every test under ThreadSanitizer (make tsan).
set -euo pipefail
cd "$(dirname "$0")/.."
make tsan
