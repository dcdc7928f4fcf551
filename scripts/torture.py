#!/usr/bin/env python3
"""Crash torture for chats: many turns, a share of them killed with SIGKILL at a random moment
(during the backend call, during the append), interleaved with normal turns on the same chats.
Afterwards every chat must load, hold every completed turn exactly once, each reply right after
its own prompt, and nothing torn or mixed. Then rewrites (rename, a new system prompt) of large
chats are killed part-way: every chat must still load with all its turns, and `chat gc` and
`chat delete` must leave no hidden copy of a chat behind.

    scripts/torture.py                 # 400 turns on 6 chats
    scripts/torture.py --turns 60      # the short version CI runs

Uses target/release/ai (or $AI_BIN); builds it if missing. Exits 1 on any violation.
"""
import argparse, json, os, random, shutil, signal, subprocess, sys, time

ap = argparse.ArgumentParser()
ap.add_argument("--turns", type=int, default=400)
ap.add_argument("--chats", type=int, default=6)
ap.add_argument("--parallel", type=int, default=4)
ap.add_argument("--seed", type=int, default=None)
ap.add_argument("--rewrites", type=int, default=40)
args = ap.parse_args()
seed = args.seed if args.seed is not None else random.randrange(1 << 30)
rng = random.Random(seed)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import world  # noqa: E402

ai, work, home, env = world.make("ai-torture-", delay=True)

def ai_run(*a, check=True):
    r = subprocess.run([ai, *a], env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if check and r.returncode != 0:
        sys.exit(f"torture: `ai {' '.join(a)}` failed ({r.returncode}): {r.stderr}")
    return r

chats = [ai_run("chat", "new", "sonnet").stdout.strip() for _ in range(args.chats)]
completed = {c: [] for c in chats}   # prompts whose call exited 0
attempted = {c: [] for c in chats}
running = []
killed = 0
started = time.time()
for i in range(args.turns):
    chat = rng.choice(chats)
    prompt = f"p{i}-{chat}"
    attempted[chat].append(prompt)
    p = subprocess.Popen([ai, "-q", "chat", chat, prompt], env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    kill_at = time.time() + rng.uniform(0, 0.05) if rng.random() < 0.5 else None
    running.append((p, chat, prompt, kill_at))
    while len(running) >= args.parallel or (i == args.turns - 1 and running):
        now = time.time()
        still = []
        for (p, c, pr, k) in running:
            if p.poll() is not None:
                if p.returncode == 0:
                    completed[c].append(pr)
            elif k is not None and now >= k:
                p.send_signal(signal.SIGKILL)
                p.wait()
                killed += 1
                if p.returncode == 0:
                    completed[c].append(pr)
            else:
                still.append((p, c, pr, k))
        running = still
        if len(running) >= args.parallel or (i == args.turns - 1 and running):
            time.sleep(0.002)

problems = []
def check(chat, when):
    r = ai_run("chat", "show", chat, "--json", check=False)
    if r.returncode != 0:
        problems.append(f"{when}: chat {chat} does not load: {r.stderr.strip()}")
        return []
    recs = json.loads(r.stdout)["records"]
    msgs = [m for m in recs if m.get("type") == "message"]
    if len(msgs) % 2:
        problems.append(f"{when}: chat {chat} has an odd number of messages")
    prompts = []
    for n in range(0, len(msgs) - 1, 2):
        u, a = msgs[n], msgs[n + 1]
        if u["role"] != "user" or a["role"] != "assistant":
            problems.append(f"{when}: chat {chat} message {n}: roles {u['role']}/{a['role']}")
        if u.get("turn") != a.get("turn") or u.get("turn") != n // 2 + 1:
            problems.append(f"{when}: chat {chat} turn numbers {u.get('turn')}/{a.get('turn')} at pair {n // 2 + 1}")
        if not a.get("interrupted") and a["content"] != "R:" + u["content"] + "\n":
            problems.append(f"{when}: chat {chat}: reply {a['content']!r} is not for {u['content']!r}")
        prompts.append(u["content"])
    dup = {p for p in prompts if prompts.count(p) > 1}
    if dup:
        problems.append(f"{when}: chat {chat}: duplicated turns {sorted(dup)[:5]}")
    missing = [p for p in completed[chat] if p not in prompts]
    if missing:
        problems.append(f"{when}: chat {chat}: completed turns missing {missing[:5]}")
    foreign = [p for p in prompts if not p.endswith(chat) and not p.startswith("after-")]
    if foreign:
        problems.append(f"{when}: chat {chat}: turns of other chats {foreign[:5]}")
    return prompts

for c in chats:
    check(c, "after the storm")
# One normal turn on each chat: a torn tail is cut off, the turn lands.
for c in chats:
    ai_run("-q", "chat", c, f"after-{c}")
    completed[c].append(f"after-{c}")
    check(c, "after a normal turn")
# Rewrites killed part-way. Each chat gets a long turn first, so a rewrite takes long enough for
# a kill to land in it.
big = "x" * (4 * 1024 * 1024)
for c in chats:
    for k in range(1):
        subprocess.run([ai, "-q", "chat", c], env=env, input=f"{big}\nbig{k}-{c}",
                       capture_output=True, text=True)
# How long one rewrite takes here: the kills aim at its last part, where the copy is written.
t = time.time()
ai_run("chat", "rename", chats[0], "calibration")
span = time.time() - t
rewritten = 0
chats_dir = os.path.join(home, "chats")
copies = set()  # hidden copies seen right after a kill
for i in range(args.rewrites):
    c = rng.choice(chats)
    cmd = ([ai, "-q", "chat", "rename", c, f"title {i}"] if rng.random() < 0.5
           else [ai, "-q", "--system", f"system {i}", "chat", c, f"after-sys-{i}-{c}"])
    p = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    time.sleep(rng.uniform(0.5 * span, 1.05 * span))
    p.send_signal(signal.SIGKILL)
    p.wait()
    rewritten += 1
    copies.update(f for f in os.listdir(chats_dir) if f.endswith(".tmp"))
    if p.returncode == 0 and "--system" in cmd:
        completed[c].append(cmd[-1])
for c in chats:
    r = ai_run("chat", "show", c, "--json", check=False)
    if r.returncode != 0:
        problems.append(f"after killed rewrites: chat {c} does not load: {r.stderr.strip()}")
        continue
    prompts = [m["content"] for m in json.loads(r.stdout)["records"]
               if m.get("type") == "message" and m.get("role") == "user"]
    missing = [p for p in completed[c] if p not in prompts]
    if missing:
        problems.append(f"after killed rewrites: chat {c}: completed turns missing {missing[:5]}")
ai_run("chat", "gc", "--older-than", "36500d")
still = [f for f in os.listdir(chats_dir) if f.endswith(".tmp")]
if still:
    problems.append(f"after chat gc: hidden copies remain: {still[:5]}")
gone = chats[0]
ai_run("chat", "delete", gone)
rest = [f for f in os.listdir(chats_dir) if gone.lower() in f.lower()]
if rest:
    problems.append(f"after chat delete {gone}: files remain: {rest[:5]}")
shutil.rmtree(work, ignore_errors=True)

total_done = sum(len(v) for v in completed.values())
print(f"torture: {args.turns} turns on {args.chats} chats, {killed} killed with SIGKILL, "
      f"{total_done} completed; {rewritten} rewrites killed ({len(copies)} left a hidden copy); "
      f"{time.time() - started:.1f}s, seed {seed}")
if problems:
    for p in problems[:40]:
        print("torture: " + p)
    sys.exit(1)
print("torture: ok: every chat loads, every completed turn is there once, nothing torn or mixed, "
      "no hidden copy left")
