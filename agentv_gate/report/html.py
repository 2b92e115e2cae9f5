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
import html
import json
import math
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..errors import ReportWriteError
from ..files import atomic_writer
from . import summarise
from .console import first_problem, totals
from .jsonl import describe_os_error, ensure_parent
from .paths import source_path
from .rows import ReportedCase, outcome
from .text import clean, truncate

HTML_NAME = "report.html"
PAGE_ROWS = 200
"""Rows drawn at a time; the data of every row is in the page from the start."""

# Caps keep one pathological answer from making the page huge; each cut is marked in the text.
ANSWER_LIMIT = 4000
TEXT_LIMIT = 4000
MISS_LIMIT = 500
MISSES_SHOWN = 30

_VERDICT_ORDER = {"error": 0, "fail": 1, "pass": 2}

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
td.where { color: var(--muted); word-break: break-all; }
td.problem { max-width: 40rem; }
.verdict { font-weight: 600; text-transform: uppercase; font-size: .8rem; }
.verdict.pass { color: var(--pass); } .verdict.fail { color: var(--fail); } .verdict.error { color: var(--error); }
details summary { cursor: pointer; color: var(--muted); }
details[open] { background: var(--panel); padding: 0 .5rem .5rem; border-radius: 6px; }
dl { margin: .5rem 0 0; } dt { font-weight: 600; margin-top: .5rem; } dd { margin: .15rem 0 0; }
pre { margin: 0; white-space: pre-wrap; word-break: break-word; font: 12.5px/1.4 ui-monospace, monospace; }
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
  // row: [verdict, id, where, target, score, threshold, seconds, problem, error, reasoning, misses, answer]
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
  function problem(tr, r) {
    // The first problem, unfolding into everything a case that did not pass has to say.
    var td = text(tr, "td", "", "problem"), box, dl;
    if (!(r[8] || r[9] || r[10].length || r[11])) { td.textContent = r[7]; return; }
    box = document.createElement("details");
    text(box, "summary", r[7] || "details");
    dl = document.createElement("dl");
    [["Error", r[8]], ["Misses", r[10].join("\\n")], ["Reasoning", r[9]], ["Answer", r[11]]].forEach(function (pair) {
      if (pair[1]) { text(dl, "dt", pair[0]); text(text(dl, "dd", ""), "pre", pair[1]); }
    });
    box.appendChild(dl);
    td.appendChild(box);
  }
  function draw(count) {
    var end = Math.min(matches.length, shown + count), frag = document.createDocumentFragment(), i, r, tr;
    for (i = shown; i < end; i++) {
      r = matches[i];
      tr = document.createElement("tr");
      tr.className = "case " + r[0];
      tr.setAttribute("data-verdict", r[0]);
      text(tr, "td", r[0], "verdict " + r[0]);
      text(tr, "td", r[1], "id");
      text(tr, "td", r[2], "where");
      text(tr, "td", r[3]);
      text(tr, "td", r[4].toFixed(3), "num");
      text(tr, "td", r[5].toFixed(3), "num");
      text(tr, "td", r[6].toFixed(2) + " s", "num");
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


def _row(result: ReportedCase) -> list[object]:
    where = f"{source_path(result)}:{result.line}" if result.line else source_path(result)
    misses = [truncate(clean(m), MISS_LIMIT) for m in list(result.misses)[:MISSES_SHOWN]]
    if len(result.misses) > MISSES_SHOWN:
        misses.append(f"… and {len(result.misses) - MISSES_SHOWN} more misses (see results.jsonl)")
    passed = result.verdict == "pass"
    return [outcome(result), clean(result.eval_id), clean(where), clean(result.target), _number(result.score),
            _number(result.threshold), round(result.duration_ms / 1000, 2), truncate(first_problem(result), MISS_LIMIT),
            truncate(clean(result.error or ""), TEXT_LIMIT),
            "" if passed else truncate(clean(result.reasoning or ""), TEXT_LIMIT), [] if passed else misses,
            truncate(clean(result.candidate_answer or ""), ANSWER_LIMIT)]


def build_html(results: Iterable[ReportedCase], planned: int | None = None, extra: str = "") -> str:
    """The whole page as text: cases that did not pass first, then by eval file and line.

    `extra` is HTML of ours (already escaped) put below the counts: the comparison with a base run."""
    results = sorted(results, key=lambda r: (_VERDICT_ORDER.get(r.verdict, 1), r.suite, r.line, r.eval_id))
    summary = summarise(results, planned)
    verdict = summary.verdict
    counts = [("passed", summary.passed), ("failed", summary.failed), ("errors", summary.errors)]
    if summary.quarantined:
        counts.append(("quarantined", summary.quarantined))
    if summary.missing_env:
        counts.append(("not run (environment variables unset)", summary.missing_env))
    if summary.not_run:
        counts.append(("not run (interrupted)", summary.not_run))
    options = [("all", f"all ({summary.total})"), ("not-passed", f"not passed ({summary.failed + summary.errors})"),
               ("fail", f"fail ({summary.failed})"), ("error", f"error ({summary.errors})"),
               ("pass", f"pass ({summary.passed})")]
    data = script_json({"page": PAGE_ROWS, "rows": [_row(r) for r in results]})
    esc = html.escape
    return "".join([
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{esc(CSP, quote=False)}\">\n",  # no \" in it
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
        f"<title>agentv-gate {verdict}: {summary.total} case{'s' if summary.total != 1 else ''}</title>\n",
        f"<style>{STYLE}</style>\n</head>\n<body>\n",
        "<h1>agentv-gate report</h1>\n",
        f"<p class=\"totals {verdict}\">{esc(totals(summary))}</p>\n",
        "<ul class=\"counts\">", *(f"<li>{esc(label)}: <strong>{n}</strong></li>" for label, n in counts), "</ul>\n", extra,
        "<noscript><p>The case list needs JavaScript; results.jsonl beside this file holds every case.</p></noscript>\n",
        "<div id=\"controls\" class=\"controls\" hidden>\n",
        "<label>Verdict <select id=\"verdict\">",
        *(f"<option value=\"{value}\">{esc(label)}</option>" for value, label in options), "</select></label>\n",
        "<input id=\"search\" type=\"search\" placeholder=\"Filter: case id, file, target, miss, reasoning, answer\" "
        "aria-label=\"Filter cases\">\n<span id=\"status\" role=\"status\"></span>\n</div>\n",
        "<table>\n<thead><tr><th>Verdict</th><th>Case</th><th>Eval file</th><th>Target</th><th>Score</th>"
        "<th>Threshold</th><th>Time</th><th>First problem</th></tr></thead>\n<tbody id=\"rows\"></tbody>\n</table>\n",
        "<button id=\"more\" type=\"button\" hidden>Show more</button>\n",
        f"<script type=\"application/json\" id=\"agentv-gate-data\">{data}</script>\n",
        f"<script>{SCRIPT}</script>\n</body>\n</html>\n",
    ])


def html_path_for(junit: Path, output_dir: Path) -> Path:
    """`report.html` beside the JUnit file; in `output_dir` when the JUnit file is a device such as /dev/null."""
    if junit.exists() and not junit.is_file():
        return output_dir / HTML_NAME
    return junit.with_name(HTML_NAME)


def write_html(results: Sequence[ReportedCase], path: Path, planned: int | None = None, extra: str = "") -> Path:
    """Write the page atomically; a failure is a `ReportWriteError` naming the file and the reason."""
    try:
        ensure_parent(path)
        with atomic_writer(path) as fh:
            fh.write(build_html(results, planned, extra))
    except OSError as exc:
        raise ReportWriteError(f"cannot write HTML report to {path}: {describe_os_error(exc)}") from exc
    return path


__all__ = ["HTML_NAME", "build_html", "html_path_for", "script_json", "write_html"]
