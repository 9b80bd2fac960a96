"""CPU seconds used so far by a process and every process below it, by name (Linux /proc).

    python scripts/proc_cpu.py PID > before.json; ...; python scripts/proc_cpu.py PID > after.json
    python scripts/proc_cpu.py --diff before.json after.json START   # share of a core each since START (epoch s)

What `gpu_serving.sh` prints beside each run: which of the server's processes (the API server,
tokenizer, scheduler, detokenizer) was busy, and how busy, while the benchmark drove it.
"""

from __future__ import annotations

import json
import os
import sys
import time


def tree(pid: int) -> list[int]:
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parent = int(f.read().rsplit(")", 1)[1].split()[1])
            except (FileNotFoundError, ProcessLookupError):
                continue
            children.setdefault(parent, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children.get(p, [])
    return out


def cpu_seconds(pid: int) -> dict[str, float]:
    """Process name (its title, as setproctitle set it, or its command) -> user + system CPU seconds."""
    out = {}
    for p in tree(pid):
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{p}/cmdline") as f:
                name = f.read().replace("\0", " ").strip()
        except (FileNotFoundError, ProcessLookupError):
            continue
        name = name.split()[0] if name.startswith("minisgl") else ("api-server " + name)[:40]
        out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return out


if __name__ == "__main__":
    if sys.argv[1] == "--diff":
        before, after = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
        wall = time.time() - float(sys.argv[4])
        shares = {k: (v - before.get(k, 0.0)) / wall for k, v in after.items()}
        print("  ".join(f"{k.split()[0]} {100 * s:.0f}%" for k, s in sorted(shares.items()) if s >= 0.005))
    else:
        json.dump(cpu_seconds(int(sys.argv[1])), sys.stdout)
