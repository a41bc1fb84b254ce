#!/usr/bin/env bash
# Copies the console e2e's screenshots (.run/console-e2e/, written by test/e2e/console.e2e-spec.ts)
# into apps/console/docs/screens/ shrunk for the repository: half width, 64 colours, no metadata.
# Needs ImageMagick's `convert` (or CONVERT=<path to it>). Run after the console e2e; commit what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
from=.run/console-e2e
to=apps/console/docs/screens
[ -d "$from" ] || { echo "no $from: run the console e2e first" >&2; exit 1; }
mkdir -p "$to"
for png in "$from"/*.png; do
  "${CONVERT:-convert}" "$png" -resize 50% -colors 64 -strip "png8:$to/$(basename "$png")"
done
du -sh "$to"
