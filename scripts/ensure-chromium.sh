#!/usr/bin/env bash
# Installs Debian's Chromium for the browser tests when /usr/bin/chromium is
# missing (a fresh CI machine; CI runs as root). Quiet and idempotent: prints
# one line saying what it did. Never fails the run: without Chromium the
# browser tests fail with their own message.
set -uo pipefail
chromium=/usr/bin/chromium
if [ -x "$chromium" ]; then
  echo "ensure-chromium: $chromium is installed"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "ensure-chromium: $chromium is missing and this is not root: run 'apt-get install chromium' for the browser tests"
  exit 0
fi
log=$(mktemp)
if DEBIAN_FRONTEND=noninteractive apt-get update -qq >"$log" 2>&1 &&
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >>"$log" 2>&1 &&
  [ -x "$chromium" ]; then
  echo "ensure-chromium: installed Debian's chromium ($("$chromium" --version 2>/dev/null))"
else
  echo "ensure-chromium: apt-get could not install chromium; its output:"
  cat "$log"
fi
rm -f "$log"
