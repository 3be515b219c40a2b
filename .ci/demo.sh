#!/usr/bin/env bash
# `make demo`: the main job on the embedded defaults, offline, into ./demo-out.
#   boards/ -> validate -> release matrix -> generated firmware sources -> asset bundle
#   -> variant builds (idf.py stand-in: no ESP-IDF on this machine) -> release artifacts -> virtual-board HIL run
#   -> the release site (catalog + browser flashing)
set -euo pipefail
cd "$(dirname "$0")/.."
X="$PWD/.venv/bin/xzbuild"
PY="$PWD/.venv/bin/python"
OUT=demo-out
rm -rf "$OUT" && mkdir -p "$OUT"
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "Validate every board file (counts are computed from boards/)"
$X boards check
$X boards stats | head -n 12

step "The release matrix at ESP-IDF 6.0.2 (summary by target)"
$X matrix list --idf-version 6.0.2
$X matrix list --idf-version 6.0.2 --json > "$OUT/matrix-6.0.2.json"
echo "wrote $OUT/matrix-6.0.2.json ($($PY -c "import json;print(len(json.load(open('$OUT/matrix-6.0.2.json'))))") records, upstream --list-boards --json format)"

step "What a change to one board file rebuilds"
echo boards/bread-compact-wifi.yaml | $X matrix select --why

step "Generate the firmware's board sources as an overlay"
$X generate --out "$OUT/firmware-overlay"
echo "$(find "$OUT/firmware-overlay" -type f | wc -l) files under $OUT/firmware-overlay"

step "Partition table of the 16 MB layout"
$X partitions check boards/partitions/v2/16m.csv --flash-size 16MB

step "Asset bundles for two variants (text font from Debian's Noto CJK, emoji from Noto Color Emoji)"
$X assets build bread-compact-wifi-lcd espressif-esp-sparkbot --out "$OUT/assets"
$X assets inspect "$OUT/assets/espressif-esp-sparkbot/assets.bin" --variant espressif-esp-sparkbot | head -n 14
$X assets preview "$OUT/assets/espressif-esp-sparkbot/assets.bin" -o "$OUT/assets/preview.png"

step "Build two variants of different chips in parallel (tests/standin/idf.py stands in for ESP-IDF)"
FW="$OUT/firmware"
# A firmware skeleton (no upstream sources here) with `xzbuild generate` run over it: the identity checks
# (board dir, BOARD_TYPE symbol for the target, no drift) pass for every board.
$PY -c "import sys; sys.path.insert(0, '.'); from pathlib import Path; from tests.builder.firmware import write_skeleton; write_skeleton(Path('$FW'))"
$X generate --firmware "$FW" --check >/dev/null
$X matrix build bread-compact-wifi waveshare-esp32-c6-touch-amoled-2.06 --jobs 2 --idf standin \
   --firmware "$FW" --idf-version 6.0.2 --relative-urls --out "$OUT/dist" --cache-dir "$OUT/cache"
ls "$OUT/dist"

step "Flash both onto virtual boards over RFC2217 and run the HIL suite against the reference server"
$X hil run --virtual 2 --dist "$OUT/dist" --out "$OUT/hil" --junit "$OUT/hil/junit.xml" --json \
  > "$OUT/hil-results.jsonl"
$PY -c "import json, sys
for r in map(json.loads, open(sys.argv[1])):
    t = r['tests']
    print(f\"{r['status'].upper():<8} {r['board']:<22} {r['variant']:<38} {r['seconds']:6.1f}s  {t.get('tests', 0)} tests\")" \
  "$OUT/hil-results.jsonl"

step "The release as a web page: board catalog with Install/Update buttons (ESP Web Tools bundled from npm)"
$X assets build bread-compact-wifi --out "$OUT/assets" >/dev/null
$X release site --dist "$OUT/dist" -o "$OUT/site" --hil "$OUT/hil-results.jsonl"
echo "site: $PWD/$OUT/site/index.html (serve it: python3 -m http.server -d $OUT/site 8000, then open http://localhost:8000)"

printf '\nDone: everything is under %s/\n' "$OUT"
