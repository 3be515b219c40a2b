#!/usr/bin/env bash
# `make demo`: the main job on the embedded defaults, offline, into ./demo-out.
set -euo pipefail
cd "$(dirname "$0")/.."
X=.venv/bin/xzbuild
rm -rf demo-out && mkdir -p demo-out
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
step "xzbuild boards check"; $X boards check
