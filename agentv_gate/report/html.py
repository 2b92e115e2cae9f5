"""report.html: one self-contained page to read a run's results in a browser, written beside the JUnit file.

Why it is built this way:

- Self-contained (inline CSS and JS, no network): it is opened from a CI artifact or a laptop's
  disk, often offline; a Content-Security-Policy with the hashes of our own style and script
  blocks forbids every fetch and every other script, so even text that got past the escaping
  could neither run nor phone home.
- Model and judge text is untrusted: the page never builds HTML from it. The rows travel as one
  JSON blob in a `<script type="application/json">` block (with `<`, `>` and `&` written as
  `\\u003c`..., so no `</script>` in an answer can close the block), and the script puts every
  value into the page with `textContent`.
- Readable at 5000 cases: rows are drawn from the blob a page at a time (the first 200, more as
  the reader scrolls or asks), so the browser never lays out thousands of rows at once; the
  filters (verdict, text) search the whole blob and live in the URL hash (`#verdict=fail&q=paris`),
  so a link can point at a filtered view.
- The summary at the top is plain HTML, readable with JavaScript off.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from ..base.files import atomic_writer
from ..errors import ReportWriteError
from . import summarise
from .console import first_problem, totals
from .jsonl import describe_os_error, ensure_parent
from .paths import source_path
from .rows import NEVER_QUARANTINED, CaseReview, EvaluatorDetail, ReportedCase, outcome, review_of
from .run_info import RunInfo
from .text import clean, escape_html, truncate

HTML_NAME = "report.html"
PAGE_ROWS = 200
"""Rows drawn at a time; the data of every row is in the page from the start."""

# Caps keep one pathological answer from making the page huge; each cut is marked in the text.
ANSWER_LIMIT = 4000
TEXT_LIMIT = 4000
MISS_LIMIT = 500
MISSES_SHOWN = 30
PASSED_TEXT_LIMIT = 1000
"""A passed case's texts (answer, messages, reasoning) are cut shorter: every case carries them now,
and a run of thousands of passed cases must stay a page a browser opens (results.jsonl has all)."""

_VERDICT_ORDER = {"error": 0, "fail": 1, "advisory": 2, "quarantined": 2, "not run": 3, "pass": 4}

STYLE = """
:root { color-scheme: light dark; --fg: #1f2328; --muted: #59636e; --bg: #fff; --line: #d1d9e0;
  --pass: #1a7f37; --fail: #cf222e; --error: #9a6700; --panel: #f6f8fa; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --muted: #9198a1; --bg: #0d1117;
  --line: #3d444d; --pass: #3fb950; --fail: #f85149; --error: #d29922; --panel: #151b23; } }
* { box-sizing: border-box; }
body { margin: 0; padding: 1.5rem; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif;
  color: var(--fg); background: var(--bg); }
h1 { font-size: 1.4rem; margin: 0 0 .25rem; }
.totals { margin: 0 0 1rem; font-size: 1.05rem; }
.totals.PASSED { color: var(--pass); } .totals.FAILED, .totals.INTERRUPTED { color: var(--fail); }
.counts { display: flex; gap: .75rem; flex-wrap: wrap; margin: 0 0 1rem; padding: 0; list-style: none; }
.counts li { padding: .35rem .7rem; border: 1px solid var(--line); border-radius: 6px; background: var(--panel); }
.controls { display: flex; gap: .75rem; align-items: center; flex-wrap: wrap; margin: 0 0 .75rem; }
.controls input, .controls select { font: inherit; padding: .3rem .5rem; color: inherit; background: var(--bg);
  border: 1px solid var(--line); border-radius: 6px; }
.controls input { min-width: 22rem; }
#status { color: var(--muted); }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .35rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { position: sticky; top: 0; background: var(--panel); }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.cases { table-layout: fixed; }
table.cases > thead th:nth-child(1) { width: 5.5rem; } table.cases > thead th:nth-child(2) { width: 11rem; }
table.cases > thead th:nth-child(3) { width: 13rem; } table.cases > thead th:nth-child(4) { width: 6.5rem; }
table.cases > thead th:nth-child(5), table.cases > thead th:nth-child(7) { width: 5rem; }
table.cases > thead th:nth-child(6) { width: 6.3rem; }
table.cases > tbody > tr > td { overflow-wrap: anywhere; }
td.where { color: var(--muted); }
.verdict { font-weight: 600; text-transform: uppercase; font-size: .8rem; }
.verdict.pass { color: var(--pass); } .verdict.fail { color: var(--fail); } .verdict.error { color: var(--error); }
.verdict.quarantined, .verdict.not-run, .verdict.advisory { color: var(--muted); }
.meta { display: grid; grid-template-columns: max-content 1fr; gap: .2rem .9rem; margin: 0 0 1rem; }
.meta dt { margin: 0; color: var(--muted); font-weight: 400; } .meta dd { margin: 0; overflow-wrap: anywhere; }
.msg { margin: .2rem 0; } .msg .role { font-weight: 600; color: var(--muted); }
.scroll { overflow-x: auto; }
table.evaluators { margin-top: .3rem; font-size: .92em; }
table.evaluators th { position: static; white-space: nowrap; overflow-wrap: normal; }
table.evaluators td { overflow-wrap: anywhere; }
table.evaluators td:nth-child(n+2):nth-child(-n+5) { white-space: nowrap; }
table.evaluators td.name { min-width: 12rem; overflow-wrap: break-word; }
table.evaluators td:nth-child(n+6) { min-width: 12rem; }
table.evaluators pre { word-break: normal; overflow-wrap: anywhere; }
@media (max-width: 640px) {
  body { padding: .75rem; }
  .controls input { min-width: 0; width: 100%; }
  table.cases, table.cases > tbody { display: block; }
  table.cases > thead { display: none; }
  table.cases > tbody > tr.case { display: block; border-bottom: 2px solid var(--line); padding: .4rem 0; }
  table.cases > tbody > tr.case > td { display: block; border: 0; padding: .1rem .2rem; text-align: left; }
  table.cases td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); }
}
details summary { cursor: pointer; color: var(--muted); }
details[open] { background: var(--panel); padding: 0 .5rem .5rem; border-radius: 6px; }
dl { margin: .5rem 0 0; } dt { font-weight: 600; margin-top: .5rem; } dd { margin: .15rem 0 0; }
pre { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; font: 12.5px/1.4 ui-monospace, monospace; }
#more { margin: 1rem 0; font: inherit; padding: .4rem .9rem; }
"""

SCRIPT = """
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("agentv-gate-data").textContent);
  var rows = data.rows, PAGE = data.page;
  var tbody = document.getElementById("rows"), status = document.getElementById("status");
  var more = document.getElementById("more"), search = document.getElementById("search");
  var verdict = document.getElementById("verdict");
  var matches = [], shown = 0;
  // row: [verdict, id, where, target, score, threshold, seconds, problem, error, reasoning, misses, answer, review]
  // review: {input: [[role, text]], criteria, expected: [[role, text]],
  //          evaluators: [[name, type, score, weight, verdict, hits, misses, reasoning, depth, error]]} or null
  function text(parent, tag, value, cls) {
    var el = document.createElement(tag);
    el.textContent = value;
    if (cls) { el.className = cls; }
    parent.appendChild(el);
    return el;
  }
  function haystack(r) {
    if (r.hay === undefined) {
      r.hay = [r[1], r[2], r[3], r[7], r[8], r[9], r[10].join("\\n"), r[11]].join("\\n").toLowerCase();
    }
    return r.hay;
  }
  function keep(r, v, q) {
    if (v === "not-passed" ? r[0] === "pass" : (v !== "all" && r[0] !== v)) { return false; }
    return !q || haystack(r).indexOf(q) !== -1;
  }
  function messages(dl, label, list) {
    var dd;
    if (!list || !list.length) { return; }
    text(dl, "dt", label);
    dd = text(dl, "dd", "");
    list.forEach(function (m) {
      var div = text(dd, "div", "", "msg");
      text(div, "span", m[0], "role");
      text(div, "pre", m[1]);
    });
  }
  function evaluators(dl, list) {
    var table, head, body;
    if (!list || !list.length) { return; }
    text(dl, "dt", "Evaluators");
    table = document.createElement("table");
    table.className = "evaluators";
    head = text(table, "thead", "").appendChild(document.createElement("tr"));
    ["Evaluator", "Type", "Score", "Weight", "Verdict", "Hits", "Misses", "Reasoning"].forEach(function (h) {
      text(head, "th", h);
    });
    body = text(table, "tbody", "");
    list.forEach(function (e) {
      var tr = document.createElement("tr"), name;
      tr.className = "evaluator";
      name = text(tr, "td", e[0], "name");
      name.style.paddingLeft = (0.6 + 1.2 * e[8]) + "rem";
      text(tr, "td", e[1]);
      text(tr, "td", e[2].toFixed(3), "num");
      text(tr, "td", String(e[3]), "num");
      text(tr, "td", e[4], "verdict " + e[4]);
      text(text(tr, "td", ""), "pre", e[5].join("\\n"));
      text(text(tr, "td", ""), "pre", (e[9] ? ["error: " + e[9]] : []).concat(e[6]).join("\\n"));
      text(text(tr, "td", ""), "pre", e[7]);
      body.appendChild(tr);
    });
    text(text(dl, "dd", ""), "div", "", "scroll").appendChild(table);
  }
  function problem(tr, r) {
    // The first problem, unfolding into what a reviewer reads of every case: what was asked and
    // expected, the answer, and each evaluator's score, weight and verdict. Open when it did not pass.
    var td = text(tr, "td", "", "problem"), box, dl, review = r[12] || {};
    function pre(pair) {
      if (pair[1]) { text(dl, "dt", pair[0]); text(text(dl, "dd", ""), "pre", pair[1]); }
    }
    box = document.createElement("details");
    box.open = r[0] !== "pass";
    text(box, "summary", r[7] || "details");
    dl = document.createElement("dl");
    messages(dl, "Input", review.input);
    pre(["Criteria", review.criteria]);
    messages(dl, "Expected output", review.expected);
    [["Answer", r[11]], ["Error", r[8]], ["Misses", r[10].join("\\n")], ["Reasoning", r[9]]].forEach(pre);
    evaluators(dl, review.evaluators);
    box.appendChild(dl);
    td.appendChild(box);
  }
  function path(tr, value) {
    // A long path wraps after a `/` first, then after a `_` or `.` inside a name (the column is
    // narrow); the CSS breaks mid-word only a name part too long for the column.
    var td = text(tr, "td", "", "where");
    value.match(/[^\\/_.]*[\\/_.]?/g).forEach(function (part) {
      if (!part) { return; }
      td.appendChild(document.createTextNode(part));
      if (/[\\/_.]$/.test(part)) { td.appendChild(document.createElement("wbr")); }
    });
  }
  function draw(count) {
    var end = Math.min(matches.length, shown + count), frag = document.createDocumentFragment(), i, r, tr;
    for (i = shown; i < end; i++) {
      r = matches[i];
      tr = document.createElement("tr");
      tr.className = "case " + r[0].replace(" ", "-");
      tr.setAttribute("data-verdict", r[0]);
      text(tr, "td", r[0], "verdict " + r[0].replace(" ", "-"));
      text(tr, "td", r[1], "id");
      path(tr, r[2]);
      text(tr, "td", r[3]);
      text(tr, "td", r[4].toFixed(3), "num");
      text(tr, "td", r[5].toFixed(3), "num");
      text(tr, "td", r[6].toFixed(2) + " s", "num");
      ["Target", "Score", "Threshold", "Time"].forEach(function (label, j) {
        tr.children[3 + j].setAttribute("data-label", label);  // named on a phone, where there is no header row
      });
      problem(tr, r);
      frag.appendChild(tr);
    }
    tbody.appendChild(frag);
    shown = end;
    status.textContent = "Showing " + shown + " of " + matches.length + " matching case" +
      (matches.length === 1 ? "" : "s") + " (" + rows.length + " in all)";
    more.hidden = shown >= matches.length;
    more.textContent = "Show " + Math.min(PAGE, matches.length - shown) + " more";
  }
  function apply() {
    var v = verdict.value, q = search.value.trim().toLowerCase();
    matches = rows.filter(function (r) { return keep(r, v, q); });
    tbody.textContent = "";
    shown = 0;
    draw(PAGE);
  }
  function fromHash() {
    var p = new URLSearchParams(location.hash.slice(1)), v = p.get("verdict") || "all";
    verdict.value = Array.prototype.some.call(verdict.options, function (o) { return o.value === v; }) ? v : "all";
    search.value = p.get("q") || "";
    apply();
  }
  function toHash() {
    var p = new URLSearchParams();
    if (verdict.value !== "all") { p.set("verdict", verdict.value); }
    if (search.value) { p.set("q", search.value); }
    history.replaceState(null, "", p.toString() ? "#" + p.toString() : location.pathname + location.search);
    apply();
  }
  verdict.addEventListener("change", toHash);
  search.addEventListener("input", toHash);
  window.addEventListener("hashchange", fromHash);
  more.addEventListener("click", function () { draw(PAGE); });
  if ("IntersectionObserver" in window) {
    new IntersectionObserver(function (entries) {
      if (entries[0].isIntersecting && !more.hidden) { draw(PAGE); }
    }, {rootMargin: "400px"}).observe(more);
  }
  document.getElementById("controls").hidden = false;
  fromHash();
})();
"""


def _csp_hash(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode("ascii") + "'"


CSP = (f"default-src 'none'; style-src {_csp_hash(STYLE)}; script-src {_csp_hash(SCRIPT)}; "
       "img-src data:; base-uri 'none'; form-action 'none'")
"""Only our own style and script (by hash) may run, and nothing may be fetched."""


def script_json(value: object) -> str:
    """JSON that can sit inside `<script type="application/json">`: no `<`, `>` or `&` is left to end the block.

    `ensure_ascii` also writes U+2028/U+2029 escaped; `JSON.parse` reads the escapes back to the same text.
    """
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _number(value: float) -> float:
    """A score as JSON can carry it (a NaN would make the blob unparseable); the verdict column says the rest."""
    return float(value) if math.isfinite(value) else 0.0


def _messages(messages: Sequence[tuple[str, str]], limit: int) -> list[list[str]]:
    return [[clean(role), truncate(clean(text), limit)] for role, text in messages]


def _evaluator(detail: EvaluatorDetail, limit: int) -> list[object]:
    """One row of a case's evaluator table: name, type, score, weight, verdict, hits, misses, reasoning, depth, error."""
    return [clean(detail.name), clean(detail.type), _number(detail.score), _number(detail.weight), clean(detail.verdict),
            [truncate(clean(h), MISS_LIMIT) for h in detail.hits[:MISSES_SHOWN]],
            [truncate(clean(m), MISS_LIMIT) for m in detail.misses[:MISSES_SHOWN]],
            truncate(clean(detail.reasoning or ""), limit), detail.depth, truncate(clean(detail.error or ""), MISS_LIMIT)]


def _review(review: CaseReview | None, limit: int) -> dict[str, object] | None:
    if review is None:
        return None
    return {"input": _messages(review.input, limit), "criteria": truncate(clean(review.criteria), limit),
            "expected": _messages(review.expected_output, limit),
            "evaluators": [_evaluator(d, limit) for d in review.evaluators]}


def _row(result: ReportedCase) -> list[object]:
    where = f"{source_path(result)}:{result.line}" if result.line else source_path(result)
    misses = [truncate(clean(m), MISS_LIMIT) for m in list(result.misses)[:MISSES_SHOWN]]
    if len(result.misses) > MISSES_SHOWN:
        misses.append(f"… and {len(result.misses) - MISSES_SHOWN} more misses (see results.jsonl)")
    review = review_of(result)
    answer = review.answer if review is not None else result.candidate_answer
    limit = PASSED_TEXT_LIMIT if result.verdict == "pass" else TEXT_LIMIT
    problem = first_problem(result)
    if result.quarantined:
        problem = (f"passes: lift its quarantine ({result.quarantined})" if result.verdict == "pass"
                   else f"{NEVER_QUARANTINED}: {result.quarantined}" if result.verdict == "error"
                   else f"quarantined: {result.quarantined}")
    return [outcome(result), clean(result.eval_id), clean(where), clean(result.target), _number(result.score),
            _number(result.threshold), round(result.duration_ms / 1000, 2), truncate(clean(problem), MISS_LIMIT),
            truncate(clean(result.error or ""), TEXT_LIMIT), truncate(clean(result.reasoning or ""), TEXT_LIMIT),
            misses, truncate(clean(answer or ""), min(limit, ANSWER_LIMIT)), _review(review, limit)]


def _duration(seconds: float) -> str:
    whole = int(round(seconds))
    return f"{seconds:.1f} s" if seconds < 60 else f"{whole // 60} min {whole % 60:02d} s"


def run_metadata(results: Sequence[ReportedCase], info: RunInfo | None) -> list[tuple[str, str]]:
    """The run's metadata rows (label, value): commit, start, agentv-gate version, targets, the judge
    targets its LLM judges called, wall time."""
    targets = sorted({r.target for r in results if r.target})
    info = info or RunInfo()
    wall = (_duration(info.wall_seconds) if info.wall_seconds is not None
            else f"not measured (merged from {info.merged_from} results files)" if info.merged_from else "not measured")
    judges = ([] if info.judges is None
              else [("Judge targets", ", ".join(sorted(set(info.judges))) or "none (no LLM judge ran)")])
    return [("Commit", info.commit or "unknown (not a git checkout)"), ("Started", info.started_at),
            ("agentv-gate", info.version), ("Targets", ", ".join(targets) or "none"), *judges, ("Wall time", wall)]


def metadata_section(results: Sequence[ReportedCase], info: RunInfo | None) -> str:
    """`<dl class="meta">` of the run: plain HTML, escaped, readable with JavaScript off."""
    esc = escape_html
    items = "".join(f"<dt>{esc(label)}</dt><dd>{esc(clean(value))}</dd>" for label, value in run_metadata(results, info))
    return f"<dl class=\"meta\" id=\"run\">{items}</dl>\n"


def build_html(results: Iterable[ReportedCase], planned: int | None = None, extra: str = "",
               info: RunInfo | None = None) -> str:
    """The whole page as text: cases that did not pass first, then by eval file and line.

    `extra` is HTML of ours (already escaped) put below the counts: the comparison with a base run.
    `info` is the run's metadata (commit, start, version, wall time). The page is built from
    sections, each a function of the results: the summary sections (`summary_sections`) then the
    case table, so a new section (costs, statistics) is one more function in that list."""
    results = sorted(results, key=lambda r: (_VERDICT_ORDER.get(outcome(r), 1), r.suite, r.line, r.eval_id))
    summary = summarise(results, planned)
    verdict = summary.verdict
    counts = [("passed", summary.passed), ("failed", summary.failed), ("errors", summary.errors)]
    if summary.quarantined:
        counts.append(("quarantined", summary.quarantined))
    if summary.advisory:
        counts.append(("advisory", summary.advisory))
    if summary.missing_env:
        counts.append(("not run (environment variables unset)", summary.missing_env))
    if summary.not_run:
        counts.append(("not run (interrupted)", summary.not_run))
    options = [("all", f"all ({summary.total})"), ("not-passed", f"not passed ({summary.failed + summary.errors})"),
               ("fail", f"fail ({summary.failed})"), ("error", f"error ({summary.errors})"),
               ("pass", f"pass ({summary.passed})")]
    if summary.quarantined:
        options.append(("quarantined", f"quarantined ({summary.quarantined})"))
    if summary.advisory:
        options.append(("advisory", f"advisory ({summary.advisory})"))
    if summary.missing_env:
        options.append(("not run", f"not run ({summary.missing_env})"))
    data = script_json({"page": PAGE_ROWS, "rows": [_row(r) for r in results]})
    esc = escape_html
    return "".join([
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{esc(CSP, quote=False)}\">\n",  # no \" in it
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
        f"<title>agentv-gate {verdict}: {summary.total} case{'s' if summary.total != 1 else ''}</title>\n",
        f"<style>{STYLE}</style>\n</head>\n<body>\n",
        "<h1>agentv-gate report</h1>\n",
        f"<p class=\"totals {verdict}\">{esc(totals(summary))}</p>\n",
        "<ul class=\"counts\">", *(f"<li>{esc(label)}: <strong>{n}</strong></li>" for label, n in counts), "</ul>\n",
        *(section(results, info) for section in SUMMARY_SECTIONS), extra,
        "<noscript><p>The case list needs JavaScript; results.jsonl beside this file holds every case.</p></noscript>\n",
        "<div id=\"controls\" class=\"controls\" hidden>\n",
        "<label>Verdict <select id=\"verdict\">",
        *(f"<option value=\"{value}\">{esc(label)}</option>" for value, label in options), "</select></label>\n",
        "<input id=\"search\" type=\"search\" placeholder=\"Filter: case id, file, target, miss, reasoning, answer\" "
        "aria-label=\"Filter cases\">\n<span id=\"status\" role=\"status\"></span>\n</div>\n",
        "<table class=\"cases\">\n<thead><tr><th>Verdict</th><th>Case</th><th>Eval file</th><th>Target</th><th>Score</th>"
        "<th>Threshold</th><th>Time</th><th>First problem</th></tr></thead>\n<tbody id=\"rows\"></tbody>\n</table>\n",
        "<button id=\"more\" type=\"button\" hidden>Show more</button>\n",
        f"<script type=\"application/json\" id=\"agentv-gate-data\">{data}</script>\n",
        f"<script>{SCRIPT}</script>\n</body>\n</html>\n",
    ])


SUMMARY_SECTIONS: list[Callable[[Sequence[ReportedCase], RunInfo | None], str]] = [metadata_section]
"""The page's sections above the case table, in order; each returns HTML of ours, every value escaped."""


def html_path_for(junit: Path, output_dir: Path) -> Path:
    """`report.html` beside the JUnit file; in `output_dir` when the JUnit file is a device such as /dev/null."""
    if junit.exists() and not junit.is_file():
        return output_dir / HTML_NAME
    return junit.with_name(HTML_NAME)


def write_html(results: Sequence[ReportedCase], path: Path, planned: int | None = None, extra: str = "",
               info: RunInfo | None = None) -> Path:
    """Write the page atomically; a failure is a `ReportWriteError` naming the file and the reason."""
    try:
        ensure_parent(path)
        with atomic_writer(path) as fh:
            fh.write(build_html(results, planned, extra, info))
    except OSError as exc:
        raise ReportWriteError(f"cannot write HTML report to {path}: {describe_os_error(exc)}") from exc
    return path


__all__ = ["HTML_NAME", "build_html", "html_path_for", "script_json", "write_html"]
