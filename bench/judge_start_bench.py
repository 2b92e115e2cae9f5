"""What a Python code judge's start costs through the runner: N `python3 judge.py` one after another,
forked from one warm interpreter, from four with hash seeds of their own (what a run does), and
started fresh (AGENTV_GATE_FORKSERVER=0).

For each: the first judge's latency (it pays the warm interpreters' starts), the median latency
of the rest, the wall time of all N, and the CPU of all processes involved (the warm
interpreters and the judges, read once they have exited). `.venv/bin/python bench/judge_start_bench.py [N]`.
"""

from __future__ import annotations

import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

from agentv_gate.transport import forkserver
from agentv_gate.transport.process import allow_new_scripts, run_judge

JUDGE = "import json, sys\npayload = sys.stdin.read()\nprint(json.dumps({'score': 1.0}))\n"


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(folder: Path, n: int, seeds: int | None) -> str:
    forkserver.close_all()
    if seeds is None:
        os.environ["AGENTV_GATE_FORKSERVER"] = "0"
    else:
        os.environ.pop("AGENTV_GATE_FORKSERVER", None)
        forkserver.HASH_SEEDS = seeds
    allow_new_scripts()
    cpu, start, latencies = children_cpu(), time.perf_counter(), []
    for _ in range(n):
        began = time.perf_counter()
        result = run_judge(["python3", "judge.py"], '{"answer": "x"}', 30, cwd=folder)
        assert result.exit_code == 0, result
        latencies.append(time.perf_counter() - began)
    wall = time.perf_counter() - start
    forkserver.close_all()  # the warm interpreters exit: their CPU (and their judges') is counted
    used = children_cpu() - cpu
    label = "fresh" if seeds is None else f"forked, {seeds} warm interpreter(s)"
    return (f"| {label} | {n} | {latencies[0] * 1000:.1f} | {statistics.median(latencies[1:]) * 1000:.1f} "
            f"| {wall:.2f} | {used * 1000 / n:.1f} |")


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    bin_dir = Path(sys.executable).parent
    os.environ["PATH"] = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    print(f"python {sys.version.split()[0]}; load average {os.getloadavg()[0]:.2f}; cores {os.cpu_count()}")
    print("| judges | N | first ms | median ms (the rest) | wall s | CPU ms / judge |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        folder = Path(work)
        (folder / "judge.py").write_text(JUDGE)
        for seeds in (1, forkserver.HASH_SEEDS, None):
            print(measure(folder, n, seeds), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
