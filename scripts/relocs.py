#!/usr/bin/env python3
"""Attribute an ELF's R_X86_64_RELATIVE relocations (and the 4 KiB pages they dirty at start-up)
to the symbols whose data they patch. Most tables are anonymous constants (`anon.HASH.N`):
read the strings they point to to tell whose they are (README, Install: where start-up goes).

    CARGO_PROFILE_RELEASE_STRIP=false cargo build --release --target-dir /tmp/relsym
    AI_NO_RELR=1 ...   (a DT_RELR binary has no RELATIVE entries to attribute)
    scripts/relocs.py /tmp/relsym/release/ai
"""
import re, subprocess, sys, bisect, collections
b = sys.argv[1]
rel = []
for line in subprocess.run(["readelf", "-rW", b], capture_output=True, text=True).stdout.splitlines():
    p = line.split()
    if len(p) >= 3 and "RELATIVE" in p[2]:
        rel.append(int(p[0], 16))
syms = []
out = subprocess.run(["nm", "-S", "--defined-only", "-C", b], capture_output=True, text=True).stdout
for line in out.splitlines():
    m = re.match(r"([0-9a-f]+) ([0-9a-f]+) (\S) (.*)", line)
    if m and m.group(3).lower() in "drvb":
        syms.append((int(m.group(1), 16), int(m.group(2), 16), m.group(4)))
syms.sort()
starts = [s[0] for s in syms]
def crate(name):
    name = re.sub(r"^<|^_<", "", name)
    m = re.match(r"(?:<impl [^>]*>|[^:<> ]+)", name)
    return (m.group(0) if m else name)[:90]
per = collections.Counter(); pages = collections.defaultdict(set); unk = 0; unkpages = set()
for off in rel:
    i = bisect.bisect_right(starts, off) - 1
    if i >= 0 and off < syms[i][0] + max(syms[i][1], 8):
        c = crate(syms[i][2]); per[c] += 1; pages[c].add(off >> 12)
    else:
        unk += 1; unkpages.add(off >> 12)
allpages = set(o >> 12 for o in rel)
print(f"relative relocations {len(rel)}, pages dirtied {len(allpages)}, unattributed {unk} ({len(unkpages)} pages)")
for c, n in per.most_common(40):
    print(f"{n:7d} {len(pages[c]):5d}p  {c}")
