#!/usr/bin/env bash
# inspector-screenshots.sh — retake the request inspector's screenshots in docs/inspector/.
# Runs the browser test (test/e2e/inspector-page.test.ts: an edge, a tunnel, `tuna http` and
# headless Chromium, all on loopback), which writes its PNGs where TUNA_INSPECTOR_SCREENSHOTS says.
set -euo pipefail
cd "$(dirname "$0")/.."
hack/chromium.sh install
TUNA_INSPECTOR_SCREENSHOTS=docs/inspector hack/node24.sh node_modules/.bin/mocha --no-config --import=tsx --timeout 60000 --exit test/e2e/inspector-page.test.ts
ls -l docs/inspector/*.png
