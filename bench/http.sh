#!/usr/bin/env bash
# HTTP benchmark (issue #4): one chat turn on a 200-message chat against a local
# OpenAI-compatible server that answers at once, beside the wall time of `true` and of
# curl making the same request (the server's own share). Median over repeated runs.
#
#   bench/http.sh            # builds in release mode first
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-30}
cargo build --release --quiet
AI=$PWD/target/release/ai
WORK=$(mktemp -d)
PORT=${PORT:-18931}
python3 - "$PORT" <<'PY' &
import http.server, sys
BODY = (b'data: {"choices":[{"delta":{"content":"ok"}}]}\n\n'
        b'data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":1}}\n\ndata: [DONE]\n\n')
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
SERVER=$!
trap 'kill $SERVER 2>/dev/null; rm -rf "$WORK"' EXIT
sleep 0.5

export AI_CLI_HOME=$WORK/home OPENAI_BASE_URL=http://127.0.0.1:$PORT/v1 OPENAI_API_KEY=sk-bench
python3 - "$AI_CLI_HOME" <<'PY'
import json, os, sys
home = sys.argv[1]
os.makedirs(f"{home}/chats", mode=0o700, exist_ok=True)
with open(f"{home}/chats/H2X.jsonl", "w") as f:
    f.write(json.dumps({"type": "chat", "v": 1, "id": "H2X", "created": "2026-01-01T00:00:00.000Z", "model": "openai:gpt-4o-mini"}) + "\n")
    for i in range(200):
        role = "user" if i % 2 == 0 else "assistant"
        f.write(json.dumps({"type": "message", "role": role, "content": f"message {i} " + "lorem ipsum dolor sit amet " * 5,
                            "ts": "2026-01-01T00:00:00.000Z", "alias": "openai:gpt-4o-mini", "provider": "openai",
                            "model": "gpt-4o-mini", "turn": i // 2 + 1}) + "\n")
PY

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

printf '%-50s %10s\n' "what" "median ms"
printf '%-50s %10s\n' "true (process start floor)" "$(median_ms true)"
if command -v curl >/dev/null; then
    printf '%-50s %10s\n' "curl, same request (server's share)" \
        "$(median_ms curl -s -o /dev/null -H 'content-type: application/json' -d '{"model":"m","messages":[]}' "$OPENAI_BASE_URL/chat/completions")"
fi
printf '%-50s %10s\n' "ai --no-chat openai:gpt-4o-mini (one-shot)" "$(median_ms "$AI" --no-chat openai:gpt-4o-mini hi)"
printf '%-50s %10s\n' "ai chat turn, 200-message chat" "$(median_ms "$AI" -q chat H2X "next question")"
