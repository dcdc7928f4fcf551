#!/usr/bin/env python3
"""Concurrency load: 200 concurrent calls spread over 10 chats, with deletes and `chat list`
calls running alongside. Afterwards every chat left holds exactly the turns whose call
succeeded (each prompt once, its reply right after it), deleted chats are gone, and every call
ended with 0, or 4 for a chat deleted under it.

    scripts/load.py                 # 200 calls, 10 chats
    scripts/load.py --calls 60      # the short version CI runs

Uses target/release/ai (or $AI_BIN); builds it if missing. Exits 1 on any violation.
"""
import argparse, json, os, random, shutil, subprocess, sys, time
from concurrent.futures import ThreadPoolExecutor

ap = argparse.ArgumentParser()
ap.add_argument("--calls", type=int, default=200)
ap.add_argument("--chats", type=int, default=10)
ap.add_argument("--deletes", type=int, default=2)
ap.add_argument("--seed", type=int, default=None)
args = ap.parse_args()
seed = args.seed if args.seed is not None else random.randrange(1 << 30)
rng = random.Random(seed)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import world  # noqa: E402

ai, work, home, env = world.make("ai-load-", delay=False)

def ai_run(*a):
    return subprocess.run([ai, *a], env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)

chats = [ai_run("chat", "new", "sonnet").stdout.strip() for _ in range(args.chats)]
doomed = rng.sample(chats, min(args.deletes, len(chats)))
jobs = [("turn", rng.choice(chats), f"load{i}") for i in range(args.calls)]
for c in doomed:
    jobs.insert(rng.randrange(len(jobs) // 4, len(jobs)), ("delete", c, None))
for _ in range(args.calls // 10):
    jobs.insert(rng.randrange(len(jobs)), ("list", None, None))

def go(job):
    kind, chat, prompt = job
    if kind == "turn":
        r = ai_run("-q", "chat", chat, prompt)
    elif kind == "delete":
        r = ai_run("chat", "delete", chat)
    else:
        r = ai_run("chat", "list", "--limit", "0")
    return job, r.returncode, r.stderr

started = time.time()
with ThreadPoolExecutor(max_workers=32) as pool:
    results = list(pool.map(go, jobs))

problems = []
succeeded = {c: [] for c in chats}
for (kind, chat, prompt), code, err in results:
    if kind == "turn" and code == 0:
        succeeded[chat].append(prompt)
    elif kind == "turn" and not (code == 4 and chat in doomed):
        problems.append(f"turn {prompt} on {chat} ended with {code}: {err.strip()}")
    elif kind != "turn" and code != 0:
        problems.append(f"{kind} {chat or ''} ended with {code}: {err.strip()}")

for c in chats:
    path = os.path.join(home, "chats", f"{c}.jsonl")
    if c in doomed:
        if os.path.exists(path):
            problems.append(f"deleted chat {c} is still there")
        continue
    r = ai_run("chat", "show", c, "--json")
    if r.returncode != 0:
        problems.append(f"chat {c} does not load: {r.stderr.strip()}")
        continue
    msgs = [m for m in json.loads(r.stdout)["records"] if m.get("type") == "message"]
    prompts = [m["content"] for m in msgs[0::2]]
    for n in range(0, len(msgs), 2):
        u, a = msgs[n], msgs[n + 1] if n + 1 < len(msgs) else None
        if a is None or u["role"] != "user" or a["role"] != "assistant" or a["content"] != "R:" + u["content"] + "\n":
            problems.append(f"chat {c}: pair {n // 2 + 1} is not a prompt and its own reply")
        if u.get("turn") != n // 2 + 1:
            problems.append(f"chat {c}: turn {u.get('turn')} at position {n // 2 + 1}")
    if sorted(prompts) != sorted(succeeded[c]):
        extra = set(prompts) - set(succeeded[c])
        lost = set(succeeded[c]) - set(prompts)
        problems.append(f"chat {c}: turns differ from the calls that succeeded (lost {sorted(lost)[:5]}, extra {sorted(extra)[:5]})")
shutil.rmtree(work, ignore_errors=True)

ok_turns = sum(len(v) for v in succeeded.values())
print(f"load: {args.calls} turns over {args.chats} chats with {len(doomed)} deletes and {args.calls // 10} lists alongside, "
      f"{ok_turns} turns succeeded, {time.time() - started:.1f}s, seed {seed}")
if problems:
    for p in problems[:40]:
        print("load: " + p)
    sys.exit(1)
print("load: ok: every chat holds exactly the turns that succeeded")
