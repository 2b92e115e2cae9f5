"""The judges' floor in `.agentv/gate.yaml`: a judge measured below it advises, it does not decide.

```yaml
judges:
  min_kappa: 0.6          # agreement with human labels (Cohen's kappa) a judge must reach
  max_flip_rate: 0.2      # share of cases whose verdicts a judge may flip on re-asking
  check: .agentv/judge-check.json   # the last `agentv-gate judge-check --json`, from the repository root
```

A judge (an evaluator name) whose measures in `check` fall below the floor has its failing
verdicts reported as advisory: the row says so, every report lists it, it is never counted as a
pass, and the gate does not fail on it (report.rows.ADVISORY). A judge the check did not measure,
or measured without labels (no kappa), is held to what was measured; no `judges:`, or no check
file, is today's behaviour. Every problem is located at its line; a check file that cannot be read
is an error (a floor read from nothing would quietly let every judge decide).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base.key_checks import did_you_mean
from ..base.problems import Problem
from ..errors import EvalFileError
from ..models import CaseResult
from .yaml_lines import key_line, load_yaml_text, read_text

FLOOR_KEYS = {"min_kappa": "the least Cohen's kappa against human labels, -1..1",
              "max_flip_rate": "the largest share of cases whose verdicts flip, 0..1",
              "check": "the `judge-check --json` file of the judges, relative to the repository root"}


@dataclass
class JudgeFloor:
    """The floor, and the measures of the last check it reads; `below` names each judge under it, and why."""

    min_kappa: float | None = None
    max_flip_rate: float | None = None
    check: Path | None = None
    below: dict[str, str] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    def advisory_for(self, result: CaseResult) -> str | None:
        """Why `result`'s failure is advisory, or None: it failed (an error never is advisory: a broken judge
        or target says nothing), and every evaluator that failed it is a judge below the floor. An evaluator
        fails it when its score is under the case's threshold or its required mark, or its verdict is
        `fail` (AgentV's label for a score under 0.6 included: a deterministic check at 0.55 keeps the
        failure a failure)."""
        if result.verdict != "fail" or not self.below:
            return None
        failing = [entry for entry in result.scores or [] if _fails(entry, result.threshold)]
        names = [str(entry.get("name")) for entry in failing]
        if not names or any(name not in self.below for name in names):
            return None
        return "; ".join(self.below[name] for name in dict.fromkeys(names))


def _fails(entry: dict[str, Any], threshold: float) -> bool:
    score, required = entry.get("score"), entry.get("required")
    if entry.get("verdict") in ("fail", "skip") or entry.get("error") or not isinstance(score, (int, float)):
        return True
    return bool(score < threshold or (isinstance(required, (int, float)) and score < required))


def load_judge_floor(path: Path | None) -> JudgeFloor | None:
    """The `judges:` of the gate config at `path`, with its check file read; None without one."""
    if path is None:
        return None
    try:
        data = load_yaml_text(read_text(path))
    except EvalFileError:
        return None  # the quarantine's reading of the same file reports it
    if not isinstance(data, dict) or "judges" not in data:
        return None
    raw, line = data["judges"], key_line(data, "judges")
    floor = JudgeFloor()
    if not isinstance(raw, dict):
        floor.problems.append(Problem(path, line, "judges must be a mapping",
                                      "judges: {min_kappa: 0.6, max_flip_rate: 0.2, check: .agentv/judge-check.json}"))
        return floor
    for key in raw:
        if key not in FLOOR_KEYS:
            floor.problems.append(Problem(path, key_line(raw, str(key), line), f"unknown key '{key}' in judges"
                                          f"{did_you_mean(str(key), list(FLOOR_KEYS))}", ", ".join(FLOOR_KEYS)))
    floor.min_kappa = _bound(raw, "min_kappa", -1.0, path, line, floor.problems)
    floor.max_flip_rate = _bound(raw, "max_flip_rate", 0.0, path, line, floor.problems)
    check = raw.get("check")
    if check is not None and (not isinstance(check, str) or not check.strip()):
        floor.problems.append(Problem(path, key_line(raw, "check", line), "judges.check must be a path",
                                      FLOOR_KEYS["check"]))
    elif check is not None:
        floor.check = path.resolve().parent.parent / check.strip()
    if floor.min_kappa is None and floor.max_flip_rate is None and not floor.problems:
        floor.problems.append(Problem(path, line, "judges sets no floor: give min_kappa, max_flip_rate or both",
                                      "judges: {min_kappa: 0.6, max_flip_rate: 0.2, check: ...}"))
    if floor.check is not None and not floor.problems:
        _read_check(floor, path, key_line(raw, "check", line))
    return floor


def _bound(raw: dict[str, Any], key: str, low: float, path: Path, line: int, problems: list[Problem]) -> float | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not low <= value <= 1:
        problems.append(Problem(path, key_line(raw, key, line), f"judges.{key} must be a number from {low:g} to 1, "
                                f"got {value!r}", FLOOR_KEYS[key]))
        return None
    return float(value)


def _read_check(floor: JudgeFloor, path: Path, line: int) -> None:
    """Which judges the check file measured below the floor. A missing file is a warning (no check yet:
    every judge decides, as without a floor); one that is not a judge-check's output is an error."""
    assert floor.check is not None
    if not floor.check.is_file():
        floor.problems.append(Problem(path, line, f"judges.check: {floor.check} does not exist (yet): every judge "
                                      "decides as usual until `agentv-gate judge-check --json` writes it",
                                      FLOOR_KEYS["check"], severity="warning"))
        return
    try:
        measured = read_judge_check(floor.check)
    except ValueError as exc:
        floor.problems.append(Problem(path, line, f"judges.check: {exc}", FLOOR_KEYS["check"]))
        return
    for name, judge in sorted(measured.items()):
        reasons = []
        if floor.min_kappa is not None and judge.kappa is not None and judge.kappa < floor.min_kappa:
            reasons.append(f"agrees with humans at kappa {judge.kappa:.2f} < {floor.min_kappa:g}")
        if floor.max_flip_rate is not None and judge.flip_rate is not None and judge.flip_rate > floor.max_flip_rate:
            reasons.append(f"flips on {judge.flip_rate:.0%} of cases > {floor.max_flip_rate:.0%}")
        if reasons:
            floor.below[name] = f"advisory: judge '{name}' " + " and ".join(reasons)


@dataclass(frozen=True)
class JudgeMeasure:
    """What the last `judge-check` measured of one judge, as `.agentv/gate.yaml`'s floor reads it."""

    judge: str
    flip_rate: float | None
    kappa: float | None


def read_judge_check(path: Path) -> dict[str, JudgeMeasure]:
    """The judges of a `judge-check --json` file, by name; a file that is not one raises `ValueError` saying why."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read {path}: {exc}") from None
    judges = data.get("judges") if isinstance(data, dict) else None
    if not isinstance(judges, list):
        raise ValueError(f"{path} is not the output of `agentv-gate judge-check --json` (no 'judges' list)")
    found: dict[str, JudgeMeasure] = {}
    for item in judges:
        if not isinstance(item, dict) or not isinstance(item.get("judge"), str):
            raise ValueError(f"{path}: a judge entry without its name")
        labels = item.get("labels")
        kappa = labels.get("kappa") if isinstance(labels, dict) else None
        flip = item.get("flip_rate")
        found[item["judge"]] = JudgeMeasure(item["judge"], _number(flip), _number(kappa))
    return found


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


__all__ = ["FLOOR_KEYS", "JudgeFloor", "JudgeMeasure", "load_judge_floor", "read_judge_check"]
