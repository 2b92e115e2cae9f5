#!/usr/bin/env python3
"""How long `agentv-gate validate` takes, and how much memory, on two large eval files.

* **big-string**: one case whose `input` is a single string of `--mb` MB (50 by default),
  written as a double-quoted YAML scalar: one huge scalar, the worst case for line tracking;
* **many-cases**: `--cases` cases (400,000 by default), each an id, an input and a `contains`
  assertion: the loader walking a long suite case by case.

Both files are generated in a temporary folder (a repository with `.git`), then the real CLI
validates each in a subprocess started from a small launcher, which reads the child's peak RSS
with `wait4` (as bench/run_bench.py does). Each figure is the fastest of `--repeat` runs.

    .venv/bin/python bench/validate_bench.py
    .venv/bin/python bench/validate_bench.py --mb 10 --cases 50000 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from run_bench import LAUNCHER  # the gate started from a small process, so its peak RSS is its own

GATE = str(Path(sys.executable).parent / "agentv-gate")

BEFORE = {"big-string": (0.85, 252), "many-cases": (31.0, 245)}
"""The figures measured before the loader changes that slowed validate (seconds, MB)."""


def write_big_string(folder: Path, mb: int) -> Path:
    path = folder / "evals" / "big.eval.yaml"
    with open(path, "w", encoding="utf-8") as out:
        out.write('tests:\n  - id: big\n    input: "')
        chunk = "All work and no play makes a long input. " * 1000
        left = mb * 1024 * 1024
        while left > 0:
            out.write(chunk[:left])
            left -= len(chunk)
        out.write('"\n    assertions:\n      - {type: contains, value: work}\n')
    return path


def write_many_cases(folder: Path, cases: int) -> Path:
    path = folder / "evals" / "many.eval.yaml"
    with open(path, "w", encoding="utf-8") as out:
        out.write("tests:\n")
        for i in range(cases):
            out.write(f"  - id: case-{i}\n    input: Say {i}\n    assertions:\n"
                      f"      - {{type: contains, value: '{i}'}}\n")
    return path


def validate(folder: Path, path: Path) -> tuple[float, float, float, int]:
    """(wall seconds, CPU seconds, peak RSS MB, exit code) of one `agentv-gate validate PATH`.

    CPU (user + system) hardly moves when other processes share the machine; wall time does."""
    report = folder / "validate.rusage.json"
    with open(folder / "validate.log", "w") as log:
        subprocess.run([sys.executable, "-c", LAUNCHER, str(report), GATE, "validate", str(path)], cwd=folder,
                       stdout=log, stderr=subprocess.STDOUT, check=True)
    measured = json.loads(report.read_text())
    return (measured["wall"], measured["cpu"], measured["maxrss_kb"] / 1024,
            os.waitstatus_to_exitcode(measured["status"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=50, help="size of the big string in MB (default 50)")
    parser.add_argument("--cases", type=int, default=400_000, help="cases of the long suite (default 400000)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per file; the fastest is kept")
    parser.add_argument("--only", choices=sorted(BEFORE), help="measure one file only")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    figures = {}
    with tempfile.TemporaryDirectory(prefix="agentv-gate-validate-bench-") as tmp:
        folder = Path(tmp)
        (folder / ".git").mkdir()
        (folder / "evals").mkdir()
        (folder / ".agentv").mkdir()  # validate checks the cases' target, as `run` would
        (folder / ".agentv/targets.yaml").write_text("targets:\n  - name: default\n    provider: mock\n")
        files = {"big-string": lambda: write_big_string(folder, args.mb),
                 "many-cases": lambda: write_many_cases(folder, args.cases)}
        for name, make in files.items():
            if args.only and name != args.only:
                continue
            path = make()
            runs = [validate(folder, path) for _ in range(args.repeat)]
            wall, cpu, rss, code = min(runs)
            if code != 0:
                raise SystemExit(f"validate {name} exited {code}:\n{(folder / 'validate.log').read_text()[-2000:]}")
            size = path.stat().st_size / 1024 / 1024
            was_s, was_mb = BEFORE[name]
            figures[name] = {"file_mb": round(size, 1), "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                             "peak_rss_mb": round(rss), "before_s": was_s, "before_mb": was_mb}
            print(f"{name:11} {size:7.1f} MB file   validate {wall:7.2f} s wall, {cpu:7.2f} s CPU   peak RSS "
                  f"{rss:5.0f} MB   (before: {was_s:g} s, {was_mb} MB)", flush=True)
            path.unlink()
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
