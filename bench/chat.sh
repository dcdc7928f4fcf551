#!/usr/bin/env bash
# Chat benchmarks (issue #3): one turn with an instant backend on chats of 10, 1,000 and
# 10,000 messages, and `ai chat list` over 10,000 chats, each beside the wall time of `true`.
# Prints median wall times over repeated runs. Not a test: figures depend on the machine.
#
#   bench/chat.sh            # builds in release mode first
#   RUNS=50 bench/chat.sh
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-30}
cargo build --release --quiet
AI=$PWD/target/release/ai
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# An instant fake backend CLI on PATH (reads its stdin, prints a line).
mkdir -p "$WORK/bin"
printf '#!/bin/sh\ncat >/dev/null\necho ok\n' > "$WORK/bin/claude"
chmod +x "$WORK/bin/claude"
export PATH="$WORK/bin:$PATH"

# median_ms CMD… : run CMD $RUNS times, print the median wall time in milliseconds.
median_ms() {
    python3 - "$RUNS" "$@" <<'PY'
import subprocess, sys, time, statistics
runs = int(sys.argv[1]); cmd = sys.argv[2:]
times = []
for _ in range(runs):
    t = time.perf_counter()
    subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    times.append((time.perf_counter() - t) * 1000)
print(f"{statistics.median(times):8.2f}")
PY
}

# make_chat HOME ID MESSAGES : a chat file of that many messages (~300 characters each).
make_chat() {
    python3 - "$1" "$2" "$3" <<'PY'
import json, os, sys
home, cid, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.makedirs(f"{home}/chats", mode=0o700, exist_ok=True)
with open(f"{home}/chats/{cid}.jsonl", "w") as f:
    f.write(json.dumps({"type": "chat", "v": 1, "id": cid, "created": "2026-01-01T00:00:00.000Z", "model": "sonnet"}) + "\n")
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        f.write(json.dumps({"type": "message", "role": role, "content": f"message {i} " + "lorem ipsum dolor sit amet " * 11,
                            "ts": "2026-01-01T00:00:00.000Z", "alias": "sonnet", "provider": "claude", "model": "sonnet",
                            "turn": i // 2 + 1}) + "\n")
PY
}

# make_chats HOME COUNT : that many small chats.
make_chats() {
    python3 - "$1" "$2" <<'PY'
import json, os, sys
home, n = sys.argv[1], int(sys.argv[2])
os.makedirs(f"{home}/chats", mode=0o700, exist_ok=True)
chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
for i in range(n):
    cid = "B" + "".join(chars[(i // 36 ** k) % 36] for k in range(3)) + "9"
    with open(f"{home}/chats/{cid}.jsonl", "w") as f:
        f.write(json.dumps({"type": "chat", "v": 1, "id": cid, "created": "2026-01-01T00:00:00.000Z", "model": "sonnet", "title": f"chat number {i}"}) + "\n")
        for t in range(1, 4):
            for role in ("user", "assistant"):
                f.write(json.dumps({"type": "message", "role": role, "content": f"{role} says something {t}", "ts": "2026-01-01T00:00:00.000Z", "alias": "sonnet", "turn": t}) + "\n")
PY
}

printf '%-44s %10s\n' "what" "median ms"
printf '%-44s %10s\n' "true (process start floor)" "$(median_ms true)"
printf '%-44s %10s\n' "ai --no-chat sonnet (one-shot, fake CLI)" "$(AI_CLI_HOME=$WORK/h0 median_ms "$AI" --no-chat sonnet hi)"
for n in 10 1000 10000; do
    export AI_CLI_HOME="$WORK/h$n"
    make_chat "$AI_CLI_HOME" "C${n}X" "$n"
    printf '%-44s %10s\n' "chat turn, $n messages (fake CLI)" "$(median_ms "$AI" -q chat "C${n}X" "next question")"
    printf '%-44s %10s\n' "chat turn, $n messages (echo backend)" "$(median_ms "$AI" -q chat "C${n}X" echo "next question")"
done
export AI_CLI_HOME="$WORK/many"
make_chats "$AI_CLI_HOME" 10000
printf '%-44s %10s\n' "chat list, 10000 chats (default limit 50)" "$(median_ms "$AI" chat list)"
printf '%-44s %10s\n' "chat list --limit 0, 10000 chats (all)" "$(median_ms "$AI" chat list --limit 0)"
printf '%-44s %10s\n' "chat list --json --limit 0, 10000 chats" "$(median_ms "$AI" chat list --json --limit 0)"
