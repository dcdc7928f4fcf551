#!/usr/bin/env python3
"""Kill and deadline torture: `ai` is signalled at random moments of a turn, and asked for a
deadline a server's Retry-After would pass. Afterwards no backend may be left running, every
exit code must be 128 + the signal, every chat must load, and the deadline must hold.

    scripts/signals.py              # 30 signalled turns
    scripts/signals.py --turns 8    # the short version for CI

Uses target/release/ai (or $AI_BIN); builds it if missing. Linux only (reads /proc).
Exits 1 on any violation.
"""
import argparse, http.server, os, random, signal, subprocess, sys, threading, time

ap = argparse.ArgumentParser()
ap.add_argument("--turns", type=int, default=30)
ap.add_argument("--seed", type=int, default=None)
args = ap.parse_args()
seed = args.seed if args.seed is not None else random.randrange(1 << 30)
rng = random.Random(seed)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import world  # noqa: E402

ai, work, home, env = world.make("ai-signals-")
pids = os.path.join(work, "pids")
os.makedirs(pids)
# A backend that records its pid and its grandchild's, answers a little, then sleeps.
fake = os.path.join(work, "bin", "claude")
with open(fake, "w") as f:
    f.write(f"""#!/bin/sh
cat > /dev/null
sleep 30 & echo $! > '{pids}'/g.$$
echo $$ > '{pids}'/c.$$
printf 'partial '
sleep 30
""")
os.chmod(fake, 0o755)

problems = []


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def left_running(children_only, limit=5.0):
    """Recorded backend pids still alive after `limit` seconds. After SIGKILL only the backend
    itself is stopped (by the kernel); what it started in the background is its own affair."""
    end = time.time() + limit
    while True:
        names = [n for n in os.listdir(pids) if not children_only or n.startswith("c.")]
        found = [int(open(os.path.join(pids, n)).read().strip() or 0) for n in names]
        running = [p for p in found if p and alive(p)]
        if not running or time.time() > end:
            return running
        time.sleep(0.05)


started = time.time()
sigs = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGKILL]
for i in range(args.turns):
    for n in os.listdir(pids):
        os.remove(os.path.join(pids, n))
    sig = rng.choice(sigs)
    p = subprocess.Popen([ai, "-q", "sonnet", f"t{i}"], env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(rng.uniform(0, 0.4))
    p.send_signal(sig)
    if rng.random() < 0.3 and sig != signal.SIGKILL:
        p.send_signal(signal.SIGINT)   # a second press always ends it at once
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        problems.append(f"turn {i}: {sig.name} did not end ai within 10 s")
        continue
    # 128 + the signal (130 after a second Ctrl+C); a signal before ai installed its handlers
    # kills it the default way.
    want = {-signal.SIGKILL} if sig == signal.SIGKILL else {128 + sig, 130, -sig}
    if p.returncode not in want:
        problems.append(f"turn {i}: {sig.name} gave exit {p.returncode}")
    running = left_running(sig == signal.SIGKILL)
    if running:
        problems.append(f"turn {i}: {sig.name} left backends running: {running}")
        for pid in running:
            os.kill(pid, signal.SIGKILL)

r = subprocess.run([ai, "chat", "list", "--limit", "0"], env=env, capture_output=True, text=True)
if r.returncode != 0:
    problems.append(f"chat list fails after the signals: {r.stderr.strip()}")


class Busy(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        body = b'{"error":{"message":"busy"}}'
        self.send_response(503)
        self.send_header("Retry-After", "40")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Busy)
threading.Thread(target=srv.serve_forever, daemon=True).start()
denv = dict(env, OPENAI_API_KEY="k", OPENAI_BASE_URL=f"http://127.0.0.1:{srv.server_address[1]}/v1")
t = time.time()
r = subprocess.run([ai, "--no-chat", "--timeout", "2", "openai:m", "hi"], env=denv,
                   stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
took = time.time() - t
if r.returncode != 1 or took > 10 or "beyond --timeout" not in r.stderr:
    problems.append(f"deadline: exit {r.returncode} after {took:.1f}s: {r.stderr.strip()}")
srv.shutdown()

subprocess.run(["rm", "-rf", work])
print(f"signals: {args.turns} signalled turns and one deadline, {time.time() - started:.1f}s, "
      f"seed {seed}")
if problems:
    for p in problems[:40]:
        print("signals: " + p)
    sys.exit(1)
print("signals: ok: every signal ended ai with its code, no backend left, the deadline held")
