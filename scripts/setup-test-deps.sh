#!/usr/bin/env bash
# The system packages the test suite needs, installed by `make test` before pytest runs.
#
#   chromium, chromium-driver   the leaderboard browser test (tests/plugin/test_leaderboard_html_browser.py)
#                               drives Debian's headless Chromium; it fails, never skips, without them
#   openjdk-17-jre-headless     a Java 17 runtime for the Spark engine (`--engine spark`)
#
# Only what is missing is installed: one `apt-get update`, then one non-interactive, quiet
# `apt-get install`. Without root, nothing is installed: the script names the packages to install
# and fails. Nothing to do (everything present) costs a few milliseconds and needs no network.
set -euo pipefail

chromium="${KPASS_CHROMIUM:-/usr/bin/chromium}"
chromedriver="${KPASS_CHROMEDRIVER:-/usr/bin/chromedriver}"
missing=()

[ -x "$chromium" ] || missing+=(chromium)
[ -x "$chromedriver" ] || missing+=(chromium-driver)

# Java: any `java` on PATH whose major version is 17 or later will do.
java_major() {
    # `java -version` prints e.g. 'openjdk version "17.0.15" 2025-04-15' (or "1.8.0_392" for 8) on stderr
    java -version 2>&1 | sed -n 's/.*version "\([0-9][0-9]*\)\(\.\([0-9][0-9]*\)\)\{0,1\}.*/\1 \3/p' | head -n 1 |
        awk '{ print ($1 == 1 ? $2 : $1) }'
}
major=""
if command -v java >/dev/null 2>&1; then
    major="$(java_major)"
fi
if ! [ "${major:-0}" -ge 17 ] 2>/dev/null; then
    missing+=(openjdk-17-jre-headless)
fi

if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "make test: missing system packages: ${missing[*]}" >&2
    echo "make test: install them, then run make test again:  sudo apt-get install -y ${missing[*]}" >&2
    exit 1
fi

echo "make test: installing ${missing[*]} (apt-get)" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${missing[@]}" >/dev/null
