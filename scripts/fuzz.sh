#!/usr/bin/env bash
# A short cargo-fuzz run of every target (not in CI): the argument grammar, the chat record
# reader, the SSE, NDJSON and AWS event-stream readers, the config reader, the knowledge-base
# note reader and chunker.
#
#   scripts/fuzz.sh            # 60 s per target
#   SECONDS_EACH=600 scripts/fuzz.sh sse
#
# Needs cargo-fuzz (cargo install cargo-fuzz). cargo fuzz wants nightly flags; on a stable
# toolchain RUSTC_BOOTSTRAP=1 lets it use them. Findings land in fuzz/artifacts/TARGET/: fix
# each, and add its input as a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."
export RUSTC_BOOTSTRAP=1
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(grammar chat_records sse ndjson eventstream config kb_note kb_chunk)
for t in "${targets[@]}"; do
    mkdir -p "fuzz/corpus/$t"
    echo "== fuzz $t for ${SECONDS_EACH:-60}s"
    cargo fuzz run "$t" "fuzz/corpus/$t" -- -max_total_time="${SECONDS_EACH:-60}" -max_len=65536 2>&1 | tail -n 4
done
