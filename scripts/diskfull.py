#!/usr/bin/env python3
"""Disk-full torture: `ai`'s home on a small tmpfs, filled up; turns of many sizes run against
it. A turn that could not be written must fail (exit 1, saying it was not saved) and leave
nothing partial; every turn that exited 0 must be in its chat; the chat must always load; after
space is freed the next turn must land. Needs permission to mount a tmpfs (root); otherwise it
says so and exits 0.

    scripts/diskfull.py             # 60 turns
    scripts/diskfull.py --turns 20  # the short version CI runs

Uses target/release/ai (or $AI_BIN). Exits 1 on any violation.
"""
import argparse, json, os, random, shutil, subprocess, sys, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--turns", type=int, default=60)
ap.add_argument("--seed", type=int, default=None)
args = ap.parse_args()
seed = args.seed if args.seed is not None else random.randrange(1 << 30)
rng = random.Random(seed)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import world  # noqa: E402

ai, work, _, env = world.make("ai-diskfull-")
mnt = os.path.join(work, "small")
os.makedirs(mnt)
if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", mnt],
                  capture_output=True).returncode != 0:
    print("diskfull: cannot mount a tmpfs here (not root?); skipped")
    shutil.rmtree(work, ignore_errors=True)
    sys.exit(0)
problems = []
try:
    env = {**env, "AI_CLI_HOME": os.path.join(mnt, "home")}

    def ai_run(*a, stdin=None):
        return subprocess.run([ai, *a], env=env, input=stdin, capture_output=True, text=True)

    chat = ai_run("chat", "new", "sonnet").stdout.strip()
    # Leave a little room: some turns fit, some do not.
    filler = os.path.join(mnt, "filler")
    with open(filler, "wb") as f:
        try:
            f.write(b"\0" * (512 * 1024))
        except OSError:
            pass
    os.truncate(filler, max(0, os.path.getsize(filler) - 48 * 1024))
    landed, failed = [], 0
    for i in range(args.turns):
        prompt = f"t{i} " + "y" * rng.choice([10, 500, 4000, 20000, 60000])
        r = ai_run("-q", "chat", chat, stdin=prompt)
        if r.returncode == 0:
            landed.append(prompt)
        else:
            failed += 1
            if "not saved" not in r.stderr and "No space" not in r.stderr:
                problems.append(f"turn {i}: failed without saying what was lost: {r.stderr.strip()[:200]}")
        show = ai_run("chat", "show", chat, "--json")
        if show.returncode != 0:
            problems.append(f"turn {i}: the chat does not load: {show.stderr.strip()[:200]}")
            break
        if i % 7 == 6:
            # Free a little, as a user deleting files would.
            os.truncate(filler, max(0, os.path.getsize(filler) - 16 * 1024))
    os.remove(filler)
    r = ai_run("-q", "chat", chat, stdin="after the disk was freed")
    if r.returncode != 0:
        problems.append(f"after freeing space the turn failed: {r.stderr.strip()[:200]}")
    else:
        landed.append("after the disk was freed")
    show = ai_run("chat", "show", chat, "--json")
    recs = json.loads(show.stdout)["records"] if show.returncode == 0 else []
    prompts = [m["content"] for m in recs if m.get("type") == "message" and m.get("role") == "user"]
    missing = [p[:20] for p in landed if p not in prompts]
    if missing:
        problems.append(f"turns that exited 0 are missing: {missing[:5]}")
    msgs = [m for m in recs if m.get("type") == "message"]
    if len(msgs) % 2:
        problems.append("the chat holds a prompt without its reply")
finally:
    subprocess.run(["umount", mnt], capture_output=True)
    shutil.rmtree(work, ignore_errors=True)

print(f"diskfull: {args.turns} turns on a full 512 KiB disk, {len(landed)} landed, {failed} refused, seed {seed}")
if problems:
    for p in problems[:20]:
        print("diskfull: " + p)
    sys.exit(1)
print("diskfull: ok: nothing partial, every landed turn kept, the chat always loads")
