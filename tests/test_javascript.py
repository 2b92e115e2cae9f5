"""agentv_gate/javascript.py against Node itself: `trim()` and RegExp as AgentV's JavaScript runs them.

Each test asks Node (which the code-judge tests already need) what JavaScript does and compares.
A difference is a case whose verdict could disagree with AgentV's, so every one left is listed
below with its reason, and the README says them.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from agentv_gate.javascript import compile_js_regex, js_trim
from tests.helpers.cli import run_cli
from tests.helpers.files import make_repo, write
from tests.helpers.reports import RESULTS, rows_by_id


def node(script: str, data: object = None) -> object:
    """What `script` writes to stdout (JSON), given `data` as JSON on stdin."""
    proc = subprocess.run(["node", "-e", script], input=json.dumps(data), capture_output=True, text=True,
                          timeout=120, check=True)
    return json.loads(proc.stdout)


def test_js_trim_trims_exactly_what_javascripts_trim_does_for_every_code_point() -> None:
    """Node says, for each code point C outside the surrogates, whether `(C + "a" + C).trim()` is "a"."""
    trimmed_by_javascript = node(
        'const out = []; for (let c = 0; c < 0x110000; c++) { if (c >= 0xD800 && c <= 0xDFFF) continue; '
        'const s = String.fromCodePoint(c); if ((s + "a" + s).trim() === "a") out.push(c); } '
        'process.stdout.write(JSON.stringify(out));')
    ours = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF and js_trim(chr(c) + "a" + chr(c)) == "a"]
    assert ours == trimmed_by_javascript and 0xFEFF in ours and 0x85 not in ours


PATTERNS = [
    # what eval files write
    r"^\d{3}-\d{4}$", r"\bParis\b", r"^\s*$", r"^yes$", r"a.b", r"^.$", r"^[^a]$", r"[\s\S]", r"[^\s]", r"\W", r"\D",
    r"(?<=a)b", r"(?<!a)b", r"(?=a)", r"(?!a)", r"(?<y>\d{4})-\k<y>", r"(a)\1", r"a|", r"|", r"()", r"(?:)", r"^$",
    r"a*?", r"a+?", r"a??", r"a{2}?", r"a{2,}", r"a{1,2}", r"\t", r"\v", r"\f", r"\r\n", r"\0", r"\07", r"\u00e9",
    r"\x41", r"[\u0041-\u005A]", r"[a-]", r"[-a]", r"[\w-]", r"\$", r"$a", r"a^", r"\^", r"\(", r"\)", r"[\]]", r"[\\]",
    r"\\", r"\/", r"/", r"\-", r"\_", r"\ ", r"\#", r"[\b]", r"\B", r"\b",
    # where Python reads another thing: now JavaScript's meaning, or refused
    r"[\W]", r"[\D\s]", r"[^\W]", r"[^\S\d]", r"[a\S]", r"x{", r"{", r"}", r"]", r"a{,3}", r"a{1,2", r"\d{,3}",
    r"[]", r"[^]", r"a[^]b", r"a[]b", r"\cJ", r"[\cJ]", r"[[]", r"[a&&b]", r"[a||b]", r"[a~~b]",
    r"(?i)paris", r"(?P<n>a)", r"(?#c)a", r"(?s).", r"(?m)^a", r"(?x)a b", r"a(?i:b)", r"(?>a)", r"a++", r"a*+",
    r"a?+", r"a{2}+", r"\Ayes", r"yes\Z", r"\a", r"\z",
    # JavaScript reads, Python has no spelling here: refused (see REFUSED)
    r"\N", r"\U", r"\e", r"\p{L}", r"\P{L}", r"\u{1F600}", r"\1(a)", r"(a)\2", r"\8", r"\k<x>", r"(?<=\d+)x",
    r"\u004", r"\x4", r"\q{ab}", r"\G", r"\h", r"\R", r"\X", r"\K", r"\Qa\E", r"[a--b]", r"\ud83d\ude00",
]
FLAGS = ["", "i", "m", "s", "u", "v", "y", "im", "iu", "ms"]
INPUTS = [
    "Paris", "paris", "PARIS", "123-4567", "١٢٣-٤٥٦٧", "yes", "yes\n", "Ayes", "yesZ", "ab", "aab", "bab", "a\nb",
    "a\rb", "a\u2028b", "b\na", "é", "É", "A", "\n", "", " ", "\u00a0", "\ufeff", "\x85", "\x1c", "x", "xyz",
    "2024-2024", "2024-2023", "\x07", "a", "N", "z", "ß", "Ω", "ω", "{", "}", "]", "[", "a{,3}", "aaa", "x{", "-", "_",
    "\x00", "\x08", "8", "\\", "$", "^", "(", ")", "a b", "\t", "\v", "\f", "\r\n", "a&&b", "a|b", "a~b", "aa", "ba",
    "12", "1x", "12x", "/", "#",
    # differ by design (KNOWN below)
    "ſ", "s", "S", "K", "\u212a", "k", "İ", "i", "😀", "a😀b",
]
KNOWN = {
    "ſ": "with i: Python folds U+017F to s; JavaScript without u does not (with u it does)",
    "\u212a": "with i: Python folds the Kelvin sign to k; JavaScript without u does not (with u it does)",
    "İ": "with i: Python folds U+0130 to i; JavaScript does not",
    "😀": "outside the Basic Multilingual Plane JavaScript without u sees two UTF-16 units; Python one character",
    "a😀b": "outside the Basic Multilingual Plane JavaScript without u sees two UTF-16 units; Python one character",
}
REFUSED = {
    **dict.fromkeys([r"\Ayes", r"yes\Z", r"\a", r"\z"], "JavaScript reads the letter; almost surely an anchor meant"),
    **dict.fromkeys([r"\N", r"\U", r"\e", r"\G", r"\h", r"\R", r"\X", r"\K", r"\Qa\E", r"\q{ab}", r"\u004", r"\x4"],
                    "an escape JavaScript reads as its letter (Python refuses it)"),
    **dict.fromkeys([r"\p{L}", r"\P{L}", r"\u{1F600}"], "u-flag Unicode escapes, which Python's re lacks"),
    **dict.fromkeys([r"\1(a)", r"(a)\2", r"\8", r"\k<x>"], "a reference to no group (JavaScript: empty or a literal)"),
    r"(?<=\d+)x": "a lookbehind of variable width, which Python's re lacks",
    **dict.fromkeys([r"[a--b]", r"[a&&b]"], "a v-flag set operation"),
    r"\ud83d\ude00": "a surrogate pair written as two escapes (Python's strings hold code points)",
}
JS_RESULTS = """
const {patterns, flags, inputs} = JSON.parse(require("fs").readFileSync(0, "utf8")); const out = {};
for (const p of patterns) for (const f of flags) { let re;
  try { re = new RegExp(p, f); } catch (e) { out[p + "/" + f] = null; continue; }
  out[p + "/" + f] = inputs.map(s => { re.lastIndex = 0; return re.test(s); }); }
process.stdout.write(JSON.stringify(out));
"""


@pytest.fixture(scope="module")
def javascript() -> dict[str, list[bool] | None]:
    """For every pattern and flags, what Node's RegExp says of every input (None: it refuses the pattern)."""
    results = node(JS_RESULTS, {"patterns": PATTERNS, "flags": FLAGS, "inputs": INPUTS})
    assert isinstance(results, dict)
    return results


@pytest.mark.parametrize("flags", FLAGS)
def test_a_pattern_matches_what_it_matches_in_javascript_or_is_refused(javascript: dict[str, list[bool] | None],
                                                                         flags: str) -> None:
    wrong: list[str] = []
    for pattern in PATTERNS:
        theirs = javascript[f"{pattern}/{flags}"]
        try:
            compiled = compile_js_regex(pattern, flags)
        except ValueError as exc:
            if theirs is not None and pattern not in REFUSED:
                wrong.append(f"/{pattern}/{flags}: refused ({exc}), JavaScript runs it")
            continue
        if theirs is None:
            wrong.append(f"/{pattern}/{flags}: run, JavaScript refuses it")
            continue
        find = compiled.match if "y" in flags else compiled.search
        for text, matched in zip(INPUTS, theirs, strict=True):
            if (find(text) is not None) != matched and text not in KNOWN:
                wrong.append(f"/{pattern}/{flags} on {text!r}: JavaScript {'matches' if matched else 'does not'}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize(("pattern", "says"), [
    (r"(?i)paris", "'(?i)'... is not JavaScript group syntax (JavaScript's RegExp refuses it) (inline flags: give "
                   "them in `flags:` instead)"),
    (r"\Ayes", "\\A is not an anchor or escape in JavaScript: AgentV's RegExp reads it as the letter 'A'; for the "
               "start of the answer write ^"),
    (r"a++", "nothing to repeat at '+' after '+' (a possessive or doubled quantifier; JavaScript's RegExp refuses it)"),
])
def test_a_refused_pattern_says_what_javascript_reads(pattern: str, says: str) -> None:
    with pytest.raises(ValueError) as raised:
        compile_js_regex(pattern, "")
    assert str(raised.value) == f"invalid regex /{pattern}/: {says}"


def test_python_only_regex_syntax_is_refused_or_read_as_javascript_reads_it(tmp_path: Path) -> None:
    """`(?i)` and `{,3}` are Python's: AgentV's RegExp throws on the first, and reads the second as the
    text "{,3}". Here both passed "PARIS, 42". Now the first is refused at its line before anything
    runs, the second fails as in AgentV, and JavaScript's spelling of each passes."""
    make_repo(tmp_path, "targets:\n  - name: default\n    provider: mock\n    response: PARIS, 42\n")
    suite = tmp_path / "evals/r.eval.yaml"
    write(suite, """
        tests:
          - id: python-flags
            input: q
            assert: [{type: regex, value: "(?i)paris"}]
    """)
    proc = run_cli("run", "evals", cwd=tmp_path)
    assert proc.returncode == 2 and "nothing was run" in proc.stderr, proc.stdout + proc.stderr
    assert ("evals/r.eval.yaml:4: regex evaluator 'regex-(?i)paris': invalid regex /(?i)paris/: '(?i)'... is not "
            "JavaScript group syntax") in proc.stderr and "(inline flags: give them in `flags:` instead)" in proc.stderr
    write(suite, """
        tests:
          - id: python-quantifier
            input: q
            assert: [{type: regex, value: "\\\\d{,3}$"}]
    """)
    proc = run_cli("run", "evals", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert rows_by_id(tmp_path / RESULTS)["python-quantifier"]["score"] == 0.0
    write(suite, """
        tests:
          - id: javascript-flags
            input: q
            assert: [{type: regex, value: "paris", flags: i}]
          - id: javascript-quantifier
            input: q
            assert: [{type: regex, value: "\\\\d{1,3}$"}]
    """)
    proc = run_cli("run", "evals", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
