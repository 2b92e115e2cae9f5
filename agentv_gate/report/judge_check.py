"""What `judge-check` found of each judge: how often it flips, how its scores spread, how it agrees with humans.

A judge asked k times about the same answer should say the same thing k times. Per judge (an
evaluator's name), over the cases it judged:

* **flip rate**: the share of cases whose k verdicts are not unanimous;
* **mean score** over every call, and **spread**: the mean, over cases, of the standard deviation of
  that case's k scores (0 for a judge that always gives the same score);
* **the cases that flip most**: those whose verdicts are split most evenly (3 of 5 before 4 of 5).

With human labels (`labels.jsonl`), the judge's verdict on a case is the majority of its k calls (a tie
is a fail, as `rejudge_on_fail` decides), and against the humans' pass/fail: **accuracy**, **Cohen's
kappa** ((p_o - p_e) / (1 - p_e), p_e the agreement two raters with these pass rates would reach by
chance; none when p_e is 1, every label and verdict alike) and the **confusion matrix** (human ×
judge). The JSON form (`judge_check_json`) is what `.agentv/gate.yaml`'s `judges.check` reads back
(`loader/judge_floor.py`).
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UsageError
from .text import inert_log_text, one_line

FLIPPING_SHOWN = 10
"""The flipping cases each judge lists, most split first."""


@dataclass
class CaseAsks:
    """One judge's k calls on one case's answer."""

    judge: str
    suite: str
    file: str
    eval_id: str
    target: str
    scores: list[float] = field(default_factory=list)
    passed: list[bool] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def flips(self) -> bool:
        return len(set(self.passed)) > 1

    @property
    def passes(self) -> int:
        return sum(self.passed)

    @property
    def verdict(self) -> bool | None:
        """The majority of the calls (a tie fails); None when no call gave a verdict."""
        if not self.passed:
            return None
        return self.passes > len(self.passed) - self.passes

    @property
    def spread(self) -> float:
        """The population standard deviation of the scores (0 with one score or none)."""
        if len(self.scores) < 2:
            return 0.0
        mean = sum(self.scores) / len(self.scores)
        return math.sqrt(sum((s - mean) ** 2 for s in self.scores) / len(self.scores))


@dataclass(frozen=True)
class Label:
    """A human's verdict on one case for one judge: pass/fail, or a score read against the case's threshold."""

    file: str
    eval_id: str
    judge: str
    passed: bool
    line: int


@dataclass(frozen=True)
class Agreement:
    labelled: int
    accuracy: float
    kappa: float | None
    confusion: dict[str, dict[str, int]]
    """human verdict -> judge verdict -> cases: `{"pass": {"pass": 9, "fail": 3}, "fail": {...}}`."""


def cohen_kappa(pairs: Sequence[tuple[bool, bool]]) -> float | None:
    """Cohen's kappa of (human, judge) verdict pairs; None with no pair, or when chance agreement is 1."""
    n = len(pairs)
    if n == 0:
        return None
    observed = sum(1 for human, judge in pairs if human == judge) / n
    human_pass = sum(1 for human, _ in pairs if human) / n
    judge_pass = sum(1 for _, judge in pairs if judge) / n
    chance = human_pass * judge_pass + (1 - human_pass) * (1 - judge_pass)
    if chance >= 1:
        return None
    return (observed - chance) / (1 - chance)


def agreement(pairs: Sequence[tuple[bool, bool]]) -> Agreement | None:
    if not pairs:
        return None
    confusion = {h: {j: 0 for j in ("pass", "fail")} for h in ("pass", "fail")}
    for human, judge in pairs:
        confusion["pass" if human else "fail"]["pass" if judge else "fail"] += 1
    agreed = confusion["pass"]["pass"] + confusion["fail"]["fail"]
    return Agreement(len(pairs), agreed / len(pairs), cohen_kappa(pairs), confusion)


@dataclass
class JudgeReport:
    judge: str
    cases: list[CaseAsks]
    agreement: Agreement | None = None

    @property
    def judged(self) -> list[CaseAsks]:
        return [case for case in self.cases if case.passed]

    @property
    def flip_rate(self) -> float | None:
        judged = self.judged
        return sum(1 for case in judged if case.flips) / len(judged) if judged else None

    @property
    def mean_score(self) -> float | None:
        scores = [s for case in self.cases for s in case.scores]
        return sum(scores) / len(scores) if scores else None

    @property
    def spread(self) -> float | None:
        judged = self.judged
        return sum(case.spread for case in judged) / len(judged) if judged else None

    @property
    def errors(self) -> int:
        return sum(len(case.errors) for case in self.cases)

    def flipping(self) -> list[CaseAsks]:
        """The cases whose verdicts disagree, the most evenly split first (then the widest spread)."""
        split = [case for case in self.judged if case.flips]
        return sorted(split, key=lambda c: (-min(c.passes, len(c.passed) - c.passes), -c.spread, c.suite, c.eval_id))


def build_reports(asks: Sequence[CaseAsks], labels: Sequence[Label] = ()) -> list[JudgeReport]:
    """One report per judge, in name order; `labels` matched to cases by (eval file, test id, judge)."""
    by_judge: dict[str, list[CaseAsks]] = {}
    for case in asks:
        by_judge.setdefault(case.judge, []).append(case)
    labelled = {(label.file, label.eval_id, label.judge): label for label in labels}
    reports = []
    for judge in sorted(by_judge):
        pairs = []
        for case in by_judge[judge]:
            label = labelled.get((case.file, case.eval_id, judge))
            if label is not None and case.verdict is not None:
                pairs.append((label.passed, case.verdict))
        reports.append(JudgeReport(judge, by_judge[judge], agreement(pairs)))
    return reports


def unmatched_labels(labels: Sequence[Label], asks: Sequence[CaseAsks]) -> list[Label]:
    """Labels naming no case a judge was asked about here (a renamed case, a judge not in the results)."""
    seen = {(case.file, case.eval_id, case.judge) for case in asks}
    return [label for label in labels if (label.file, label.eval_id, label.judge) not in seen]


LABEL_KEYS = ("eval_file", "test_id", "evaluator", "label", "score", "note")


def read_labels(path: Path, thresholds: dict[tuple[str, str], float]) -> list[Label]:
    """`labels.jsonl`: one JSON object a line, `{"eval_file", "test_id", "evaluator", "label": "pass"|"fail"}`
    (or `"score": 0..1`, a pass at or above the case's threshold, from `thresholds` by (eval file, test id),
    else 0.5). Blank lines are skipped; anything else wrong is refused at its line (exit 2): a label read
    wrong would make the agreement say something false."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--labels {path}: cannot read it ({exc})") from None
    labels: list[Label] = []
    seen: dict[tuple[str, str, str], int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"--labels {path}:{number}"
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{where}: not JSON ({exc.msg})") from None
        if not isinstance(item, dict):
            raise UsageError(f"{where}: a label is a JSON object with eval_file, test_id, evaluator and label")
        unknown = [key for key in item if key not in LABEL_KEYS]
        if unknown:
            raise UsageError(f"{where}: unknown key '{unknown[0]}' (a label has {', '.join(LABEL_KEYS)})")
        for key in ("eval_file", "test_id", "evaluator"):
            if not isinstance(item.get(key), str) or not item[key].strip():
                raise UsageError(f"{where}: '{key}' must be text")
        file = _normal(item["eval_file"])
        key3 = (file, item["test_id"], item["evaluator"])
        if key3 in seen:
            raise UsageError(f"{where}: the same case and evaluator is labelled at line {seen[key3]} too")
        seen[key3] = number
        labels.append(Label(file, item["test_id"], item["evaluator"], _human_pass(item, where, thresholds, key3),
                            number))
    if not labels:
        raise UsageError(f"--labels {path} holds no label")
    return labels


def _human_pass(item: dict[str, Any], where: str, thresholds: dict[tuple[str, str], float],
                key: tuple[str, str, str]) -> bool:
    if ("label" in item) == ("score" in item):
        raise UsageError(f"{where}: give one of 'label' (pass or fail) and 'score' (0..1)")
    if "label" in item:
        if item["label"] not in ("pass", "fail"):
            raise UsageError(f"{where}: 'label' must be \"pass\" or \"fail\", got {item['label']!r}")
        return bool(item["label"] == "pass")
    score = item["score"]
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 1:
        raise UsageError(f"{where}: 'score' must be a number from 0 to 1, got {score!r}")
    return bool(score >= thresholds.get((key[0], key[1]), 0.5))


def _normal(path: str) -> str:
    text = path.replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    return text


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _split(case: CaseAsks) -> str:
    return f"{case.passes}/{len(case.passed)} passed"


def table_lines(reports: Sequence[JudgeReport], asks: int) -> list[str]:
    """The console's table, a line per judge, then each judge's flipping cases and confusion matrix."""
    head = ("judge", "cases", "asks", "flip rate", "mean score", "spread", "errors", "accuracy", "kappa")
    rows = [head] + [(r.judge, str(len(r.judged)), str(asks), _pct(r.flip_rate), _num(r.mean_score), _num(r.spread),
                      str(r.errors), _pct(r.agreement.accuracy) if r.agreement else "-",
                      _num(r.agreement.kappa) if r.agreement else "-") for r in reports]
    cells = [[one_line(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(head))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in cells]
    for report in reports:
        flipping = report.flipping()
        if flipping:
            shown = ", ".join(f"{one_line(c.eval_id)} ({_split(c)})" for c in flipping[:FLIPPING_SHOWN])
            more = f" and {len(flipping) - FLIPPING_SHOWN} more" if len(flipping) > FLIPPING_SHOWN else ""
            lines.append(f"flipping most ({one_line(report.judge)}): {shown}{more}")
        if report.agreement:
            c = report.agreement.confusion
            lines.append(f"confusion ({one_line(report.judge)}, {report.agreement.labelled} labelled): human pass: "
                         f"judge pass {c['pass']['pass']}, judge fail {c['pass']['fail']}; human fail: judge pass "
                         f"{c['fail']['pass']}, judge fail {c['fail']['fail']}")
    return [inert_log_text(line) for line in lines]


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def judge_check_json(reports: Sequence[JudgeReport], asks: int, results: str) -> dict[str, Any]:
    return {"results": results, "asks": asks, "judges": [{
        "judge": r.judge, "cases": len(r.judged), "calls": sum(len(c.scores) for c in r.cases), "errors": r.errors,
        "flip_rate": _round(r.flip_rate), "mean_score": _round(r.mean_score), "spread": _round(r.spread),
        "flipping": [{"eval_id": c.eval_id, "eval_file": c.file, "target": c.target, "passes": c.passes,
                      "asks": len(c.passed), "scores": c.scores} for c in r.flipping()],
        **({"labels": {"labelled": r.agreement.labelled, "accuracy": _round(r.agreement.accuracy),
                       "kappa": _round(r.agreement.kappa), "confusion": r.agreement.confusion}}
           if r.agreement else {}),
    } for r in reports]}


def html_section(reports: Sequence[JudgeReport], asks: int) -> str:
    """report.html's "Judges" section: the table, each judge's flipping cases and confusion matrix (escaped)."""
    esc = html.escape
    rows = "".join(
        f"<tr><td>{esc(r.judge)}</td><td>{len(r.judged)}</td><td>{asks}</td><td>{_pct(r.flip_rate)}</td>"
        f"<td>{_num(r.mean_score)}</td><td>{_num(r.spread)}</td><td>{r.errors}</td>"
        f"<td>{_pct(r.agreement.accuracy) if r.agreement else '-'}</td>"
        f"<td>{_num(r.agreement.kappa) if r.agreement else '-'}</td></tr>" for r in reports)
    parts = [f"<section id=\"judges\"><h2>Judges (each case asked {asks} times)</h2>",
             "<table><thead><tr><th>Judge</th><th>Cases</th><th>Asks</th><th>Flip rate</th><th>Mean score</th>"
             "<th>Spread</th><th>Errors</th><th>Accuracy</th><th>Kappa</th></tr></thead>",
             f"<tbody>{rows}</tbody></table>"]
    for r in reports:
        flipping = r.flipping()
        if flipping:
            items = "".join(f"<li>{esc(c.eval_id)} ({esc(c.file)}): {_split(c)}, scores "
                            f"{esc(', '.join(f'{s:g}' for s in c.scores))}</li>" for c in flipping[:FLIPPING_SHOWN])
            parts.append(f"<h3>Flipping most: {esc(r.judge)}</h3><ul>{items}</ul>")
        if r.agreement:
            c = r.agreement.confusion
            parts.append(f"<h3>Against human labels: {esc(r.judge)}</h3><table><thead><tr><th></th>"
                         "<th>judge pass</th><th>judge fail</th></tr></thead><tbody>"
                         f"<tr><th>human pass</th><td>{c['pass']['pass']}</td><td>{c['pass']['fail']}</td></tr>"
                         f"<tr><th>human fail</th><td>{c['fail']['pass']}</td><td>{c['fail']['fail']}</td></tr>"
                         "</tbody></table>")
    parts.append("</section>")
    return "".join(parts)


__all__ = ["Agreement", "CaseAsks", "JudgeReport", "Label", "agreement", "build_reports",
           "cohen_kappa", "html_section", "judge_check_json", "read_labels", "table_lines",
           "unmatched_labels"]
