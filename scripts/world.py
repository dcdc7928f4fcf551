"""The setting torture.py and load.py share: the `ai` binary, a temporary home, and a fake
`claude` that answers "R:" + the prompt (the last line of the transcript it is sent)."""
import os, subprocess, tempfile


def make(prefix, delay=False):
    """(ai, work, home, env). Uses $AI_BIN, else builds target/release/ai. With `delay`, the
    fake waits 0–30 ms, so kills land while it runs."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ai = os.environ.get("AI_BIN") or os.path.join(root, "target", "release", "ai")
    if not os.environ.get("AI_BIN"):
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=root, check=True)
    work = tempfile.mkdtemp(prefix=prefix)
    home, bindir = os.path.join(work, "home"), os.path.join(work, "bin")
    os.makedirs(home)
    os.makedirs(bindir)
    fake = os.path.join(bindir, "claude")
    wait = "sleep 0.0$(( $$ % 4 ))\n" if delay else ""
    with open(fake, "w") as f:
        f.write("#!/bin/sh\nin=$(cat)\n" + wait + "printf 'R:%s\\n' \"$(printf '%s\\n' \"$in\" | tail -n 1)\"\n")
    os.chmod(fake, 0o755)
    env = {"PATH": f"{bindir}:/usr/bin:/bin", "HOME": work, "AI_CLI_HOME": home}
    return ai, work, home, env
