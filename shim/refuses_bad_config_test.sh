#!/usr/bin/env bash
# The real shim binary, given a configuration the scorer refuses, exits
# non-zero at start with the scorer's message, before it dials anything.
# Usage: refuses_bad_config_test.sh SHIM CONFIG
# CONFIG's first line is "# expect: <message>".
set -uo pipefail
shim="$1"
config="$2"
expected="$(head -1 "$config" | sed 's/^# expect: //')"
out="$(timeout 30 "$shim" --config "$config" --scorer 127.0.0.1:1 2>&1)"
rc=$?
if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then
  echo "shim exited $rc (want non-zero, at once) with: $out" >&2
  exit 1
fi
if ! grep -qF -- "$expected" <<<"$out"; then
  echo "shim exited $rc without \"$expected\"; it said: $out" >&2
  exit 1
fi
echo "shim exited $rc: $expected"
