#!/usr/bin/env bash
# Usage: scripts/test-times.sh LOG — where `cargo test`'s time went (issue 26 point 7): each test
# binary's run time from the log `make test-rust` keeps (tests/results/test-rust.log), the
# slowest first, and the sum. Run times only: the build before is timed by the Makefile.
set -euo pipefail
log="$1"
awk '
  /^ *Running / { name = ($2 == "unittests") ? $3 : $2; next }
  /^ *Doc-tests / { name = "doc-tests " $2; next }
  /^test result: / {
    t = $0; sub(/.*finished in /, "", t); sub(/s.*/, "", t)
    if (name == "") name = "?"
    secs[name] += t; total += t; n++; name = ""
  }
  END {
    printf "==> test-rust: %d test binaries ran for %.0f s in all; the slowest:\n", n, total
    for (k in secs) printf "%10.1f s  %s\n", secs[k], k | "sort -rn | head -15"
  }' "$log"
