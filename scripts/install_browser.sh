#!/usr/bin/env bash
# Chromium for tests/test_browser.py (JupyterLab driven by Playwright for Python).
#
# Playwright's own browser download (`playwright install`) needs a CDN that offline or locked-down
# machines cannot reach, so the test uses the distribution's Chromium instead. This script is
# quick when Chromium is already there and never fails: without apt (or without root) it only
# says so, and the browser test then skips with that reason.
#
#     bash scripts/install_browser.sh
set -u

for b in "${MINISGL_CHROMIUM:-}" /usr/bin/chromium /usr/bin/chromium-browser; do
    if [ -n "$b" ] && [ -x "$b" ]; then
        exit 0
    fi
done

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install_browser: no apt-get here; install Chromium yourself (or set MINISGL_CHROMIUM)" \
         "to run tests/test_browser.py" >&2
    exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        SUDO="sudo -n"
    else
        echo "install_browser: not root and no password-less sudo; run" \
             "'sudo apt-get install -y chromium' to run tests/test_browser.py" >&2
        exit 0
    fi
fi

echo "install_browser: apt-get install chromium (for tests/test_browser.py)" >&2
export DEBIAN_FRONTEND=noninteractive
if ! $SUDO apt-get install -y -q chromium >/dev/null 2>&1; then
    # The package lists may be missing or stale (fresh containers ship without them).
    $SUDO apt-get update -q >/dev/null 2>&1 || true
    if ! $SUDO apt-get install -y -q chromium >/dev/null 2>&1; then
        echo "install_browser: apt-get could not install chromium; tests/test_browser.py will skip" >&2
    fi
fi
exit 0
