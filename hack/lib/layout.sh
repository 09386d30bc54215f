#!/usr/bin/env bash
# The layout the build keeps (docs/design.md, "Layout"): shim/ and scorer/
# are peers over model/, common/ and the proto. Sourced by hack/test.sh.

# Fails, naming each line, when a file under shim/ includes a header under
# scorer/ or a file under scorer/ one under shim/.
kscore_check_includes() {  # kscore_check_includes ROOT
  local root="$1" bad
  bad=$(cd "$root" && grep -rnE '^\s*#\s*include\s+"scorer/' shim;
        cd "$root" && grep -rnE '^\s*#\s*include\s+"shim/' scorer model common)
  if [ -n "$bad" ]; then
    echo "shim/ and scorer/ include each other (use model/ or common/):" >&2
    echo "$bad" >&2
    return 1
  fi
}

# Fails when the shim binary holds a symbol of the scorer's framework or
# plugins: the shim links no plugin, by the build and not by convention.
kscore_check_shim_symbols() {  # kscore_check_shim_symbols SHIM_BINARY
  local bin="$1" bad
  [ -x "$bin" ] || { echo "no shim binary at $bin" >&2; return 1; }
  bad=$(nm -C "$bin" | grep -E 'kscore::(framework|plugins)::' | head -20)
  if [ -n "$bad" ]; then
    echo "$bin links scorer code:" >&2
    echo "$bad" >&2
    return 1
  fi
}
