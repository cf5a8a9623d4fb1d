#!/usr/bin/env bash
# Runs README.md's run command exactly as the README gives it (read by readme-command.sh, never
# copied) with --manifest appended, and fails unless it printed the session-manager manifest: a
# README whose run command drifts from the code fails CI.
set -euo pipefail
cd "$(dirname "$0")/.."
run_command="$(bash scripts/readme-command.sh run)"
echo "+ $run_command --manifest"
if ! manifest="$(eval "$run_command --manifest")"; then
  echo "README.md's run command failed: $run_command" >&2
  exit 1
fi
if ! printf '%s\n' "$manifest" | grep -q '^  "name": "session-manager",$'; then
  printf "README.md's run command did not print the worker manifest:\n%s\n" "$manifest" >&2
  exit 1
fi
echo "README run command works: it printed the session-manager manifest"
