#!/usr/bin/env bash
# clang-format (Google style) on every C++ file; --check fails on a diff.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
mapfile -t files < <(git ls-files -co --exclude-standard '*.cc' '*.h' | grep -v '^reference/')
if [ "${1:-}" = "--check" ]; then
  clang-format --style=file --dry-run --Werror "${files[@]}"
else
  clang-format --style=file -i "${files[@]}"
fi
