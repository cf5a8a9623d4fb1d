#!/usr/bin/env bash
# Prints one of README.md's two set-up commands, read from the README itself so that CI runs what
# a newcomer copies: `run` (the first ```sh block under "## The two commands") or `test` (the
# second). Each block must hold exactly one command line; anything else is an error.
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
  run) block=1 ;;
  test) block=2 ;;
  *) echo "usage: $0 run|test" >&2; exit 2 ;;
esac

command="$(awk -v want="$block" '
  /^## / { in_section = ($0 == "## The two commands"); next }
  !in_section { next }
  /^```sh[[:space:]]*$/ { fenced = 1; n++; next }
  /^```/ && fenced { fenced = 0; next }
  fenced && n == want && NF { print }
' README.md)"

lines="$(printf '%s' "$command" | grep -c . || true)"
if [ "$lines" != 1 ]; then
  echo "README.md: sh block $block under '## The two commands' must hold exactly one command" \
    "line (found $lines)" >&2
  exit 1
fi
printf '%s\n' "$command"
