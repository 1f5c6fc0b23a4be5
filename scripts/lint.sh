#!/bin/sh
# ruff and mypy over the sources (configured in pyproject.toml); exits non-zero on any finding.
# Usage: scripts/lint.sh [PYTHON]   (default: .venv/bin/python)
set -eu
cd "$(dirname "$0")/.."
PYTHON=${1:-.venv/bin/python}
case "$PYTHON" in /*) ;; */*) PYTHON="$PWD/$PYTHON" ;; esac
"$PYTHON" -m ruff check plugin metrics adapters tests examples scripts
# mypy needs the import names: the source folders map onto kpass (plugin/), kpass.metrics and
# kpass.adapters, so a temporary tree of links gives it that layout.
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir "$tree/kpass"
for entry in plugin/*; do ln -s "$PWD/$entry" "$tree/kpass/"; done
ln -s "$PWD/metrics" "$tree/kpass/metrics"
ln -s "$PWD/adapters" "$tree/kpass/adapters"
repo=$PWD
(cd "$tree" && "$PYTHON" -m mypy --config-file "$repo/pyproject.toml" --cache-dir "$tree/.mypy_cache" -p kpass)
