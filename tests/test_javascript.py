"""agentv_gate/base/jscompat.py against Node itself: `trim()` and RegExp as AgentV's JavaScript runs them.

Each test asks Node (which the code-judge tests already need) what JavaScript does and compares.
A difference is a case whose verdict could disagree with AgentV's, so every one left is listed
below with its reason, and the README says them.
"""

from __future__ import annotations

import itertools
import json
import random
import subprocess
from pathlib import Path

import pytest

from agentv_gate.base.jscompat import compile_js_regex, js_trim
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
    # references and quantified assertions, as JavaScript reads them
    r"(a)?\1", r"(a\1)", r"\10", r"\1", r"(a)\10", r"\9", r"\k<x>", r"(?<n>a)?\k<n>b", r"(?<!b){2}", r"\b+",
    r"(?=a)*b", r"^*", r"$+", r"(?:x)\1(a)", r"[a(]\1", r"[(]\1", r"[](a)\1", r"[ab&&c]", r"[ab~~c]",
    r"[^(]\1", r"[^](a)\1", r"a&\1", r"x(a)\1", r"\(\1", r"\.(a)\1", r"[\,]", r"[\-]", r"[,a]", r"[a!!b]",
    r"[a!b]", r"[!!]", r"[a\-b]", r"[a-]b", "a\\", r"[a", r"(a", r"a)", r"^[](a)\1", r"(a)(b)\1",
    r"\.5", r"\nA", r"[A(]\1",
    # characters outside the Basic Multilingual Plane
    r"^..$", r"😀", r"^😀$", r"[😀]", r"^[😀]$", r"^[^a]{2}$", r"^\S$", r"\ud83d", r"^\ud83d\ude00$", r"😀+",
    r"^\ude00", r"[\ud83d]", r"[😀-😂]", r"^.{3}$", r"𐐀", r"^\W+$", r"\u{1F600}", r"[\ud800-\udbff]",
    r"[\u{1F600}-\u{1F64F}]", r"^\u{61}\u{0}?$", r"^\ud83d\ude01$", r"^\u{1F601}$", r"\x41\ud83d\ude01",
    # group counting and references, at the edges of the translator
    r"(a)(b)c+\2", r"(a)\1\\", r"[]^|(a)\1", r"\01a", r"[~a]", r"[a~]", r"[|a]",
    # a reference to a repeated group or one inside it: JavaScript empties the group at each repetition, Python does not
    r"^(?:(a)|b)+\1$", r"(?:(a)|b){2}\1", r"(?:(a)|(b))+\1\2", r"^(?:(?<n>a)|b)*\k<n>$", r"^(?:(a)|b\1)+$",
    r"(a|b)+\1", r"(?:(a)|b)?\1", r"(?:(a)|b){1}\1", r"(?:(a)|b){0,1}\1", r"((a)|b)\2",
]
FLAGS = ["", "i", "m", "s", "u", "v", "y", "im", "iu", "ms"]
INPUTS = [
    "Paris", "paris", "PARIS", "123-4567", "١٢٣-٤٥٦٧", "yes", "yes\n", "Ayes", "yesZ", "ab", "aab", "bab", "a\nb",
    "a\rb", "a\u2028b", "b\na", "é", "É", "A", "\n", "", " ", "\u00a0", "\ufeff", "\x85", "\x1c", "x", "xyz",
    "2024-2024", "2024-2023", "\x07", "a", "N", "z", "ß", "Ω", "ω", "{", "}", "]", "[", "a{,3}", "aaa", "x{", "-", "_",
    "\x00", "\x08", "8", "\\", "$", "^", "(", ")", "a b", "\t", "\v", "\f", "\r\n", "a&&b", "a|b", "a~b", "aa", "ba",
    "12", "1x", "12x", "/", "#", ".5", "b\nA", "W",
    # outside the Basic Multilingual Plane: two UTF-16 units to JavaScript without u, one character with it
    "😀", "a😀b", "😀😀", "\ud83d", "\ude00a", "𐐀", "𐐨", "😁", "A😁",
    "abcc", "abb", "aa\\",
    # differ by design (KNOWN below)
    "ſ", "s", "S", "K", "\u212a", "k", "İ", "i",
]
KNOWN = {
    "ſ": "with i: Python folds U+017F to s; JavaScript without u does not (with u it does)",
    "\u212a": "with i: Python folds the Kelvin sign to k; JavaScript without u does not (with u it does)",
    "İ": "with i: Python folds U+0130 to i; JavaScript does not",
}
KNOWN_WITH_U = {
    (r"\B", "a😀b"): "with u, V8 still tries a match between the two halves of an emoji; Python has no position there",
}
REFUSED = {
    **dict.fromkeys([r"\Ayes", r"yes\Z", r"\a", r"\z"], "JavaScript reads the letter; almost surely an anchor meant"),
    **dict.fromkeys([r"\N", r"\U", r"\e", r"\G", r"\h", r"\R", r"\X", r"\K", r"\Qa\E", r"\q{ab}", r"\u004", r"\x4"],
                    "an escape JavaScript reads as its letter (Python refuses it)"),
    **dict.fromkeys([r"\p{L}", r"\P{L}"], "u-flag Unicode property escapes, which Python's re lacks"),
    **dict.fromkeys([r"\u{1F600}", r"^\u{1F601}$", r"^\u{61}\u{0}?$"],
                    "without u JavaScript reads the letter u and the text {...}; the u flag was surely meant"),
    r"(?<=\d+)x": "a lookbehind of variable width, which Python's re lacks",
    **dict.fromkeys([r"[a--b]", r"[a&&b]", r"[ab&&c]"], "a v-flag set operation"),
    **dict.fromkeys([r"^(?:(a)|b)+\1$", r"(?:(a)|b){2}\1", r"(?:(a)|(b))+\1\2", r"^(?:(?<n>a)|b)*\k<n>$",
                     r"^(?:(a)|b\1)+$", r"(a|b)+\1"], "a reference to a repeated group or one inside it (JavaScript "
                    "empties it at each repetition, Python's re keeps the last match)"),
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
        for text, matched in zip(INPUTS, theirs, strict=True):
            known = text in KNOWN or (("u" in flags or "v" in flags) and (pattern, text) in KNOWN_WITH_U)
            if compiled.test(text) != matched and not known:
                wrong.append(f"/{pattern}/{flags} on {text!r}: JavaScript {'matches' if matched else 'does not'}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize(("pattern", "flags", "says"), [
    (r"[ab~~c]", "v", "'~~' must be escaped in a class with the v flag (JavaScript's RegExp refuses it)"),
    (r"[ab(c]", "v", "'(' must be escaped in a class with the v flag (JavaScript's RegExp refuses it)"),
    (r"(?i)paris", "", "'(?i)'... is not JavaScript group syntax (JavaScript's RegExp refuses it) (inline flags: give "
                   "them in `flags:` instead)"),
    (r"\Ayes", "", "\\A is not an anchor or escape in JavaScript: AgentV's RegExp reads it as the letter 'A'; for the "
               "start of the answer write ^"),
    (r"yes\Z", "", "\\Z is not an anchor or escape in JavaScript: AgentV's RegExp reads it as the letter 'Z'; for the "
                  "end of the answer write $"),
    (r"(?P<n>a)", "", "'(?P<'... is not JavaScript group syntax (JavaScript's RegExp refuses it)"),
    (r"a++", "", "nothing to repeat at '+' after '+' (a possessive or doubled quantifier; JavaScript's RegExp refuses it)"),
    (r"\u{1F600}", "", "\\u{...} spells a character only with the u or v flag: without one JavaScript reads the "
                      "letter u and the text {...} (add `u` to `flags:`)"),
    (r"\u{110000}", "u", "\\u{...} must hold a code point in hexadecimal, at most 10FFFF (JavaScript's RegExp "
                        "refuses it)"),
    (r"\u{}", "u", "\\u{...} must hold a code point in hexadecimal, at most 10FFFF (JavaScript's RegExp refuses it)"),
    (r"[|a]", "v", "'|' must be escaped in a class with the v flag (JavaScript's RegExp refuses it)"),
    (r"^(?:(a)|b)+\1$", "", "\\1 refers to group 1, which is repeated or inside a repeated group: JavaScript empties it at each "
                           "repetition and Python keeps its last match, so the two can disagree (no Python spelling here)"),
    (r"(?:(?<day>\d)-)+\k<day>", "", "\\k<day> refers to group 1, which is repeated or inside a repeated group: JavaScript "
                                    "empties it at each repetition and Python keeps its last match, so the two can "
                                    "disagree (no Python spelling here)"),
])
def test_a_refused_pattern_says_what_javascript_reads(pattern: str, flags: str, says: str) -> None:
    with pytest.raises(ValueError) as raised:
        compile_js_regex(pattern, flags)
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


def test_an_emoji_counts_as_two_characters_without_u_as_in_javascript(tmp_path: Path) -> None:
    """A length cap on the answer: JavaScript without `u` reads each emoji as two UTF-16 units, so
    `^.{1,5}$` fails "😀😀😀" in AgentV. Here it passed (Python reads three characters); with `u`
    both read three and pass it."""
    make_repo(tmp_path, "targets:\n  - name: default\n    provider: mock\n    response: \"😀😀😀\"\n")
    write(tmp_path / "evals/r.eval.yaml", """
        tests:
          - id: units
            input: q
            assert: [{type: regex, value: "^.{1,5}$"}]
          - id: code-points
            input: q
            assert: [{type: regex, value: "^.{1,5}$", flags: u}]
          - id: escaped-pair
            input: q
            assert: [{type: regex, value: "^(?:\\\\ud83d\\\\ude00){3}$", flags: u}]
    """)
    proc = run_cli("run", "evals", cwd=tmp_path)
    rows = rows_by_id(tmp_path / RESULTS)
    assert {case: row["verdict"] for case, row in rows.items()} == {
        "units": "fail", "code-points": "pass", "escaped-pair": "pass"}, proc.stdout + proc.stderr


ATOMS = ["a", "b", "A", "1", "é", r"\d", r"\w", r"\s", r"\D", r"\W", r"\S", ".", r"\b", r"\B", "^", "$", "[ab]", "[^a]",
         "[a-c]", r"[\d\s]", r"[\W]", r"[^\S]", r"\n", r"\t", "-", "_", " ", r"\.", r"\-", "(a)", "(?:ab)", "(?=a)",
         "(?!b)", "(?<=a)", "(?<!b)", "(?<g>a)", r"\1", "x{2}", "a{1,}", r"\u00e9", r"\x41", r"\0", r"\cM", "[]", "[^]",
         r"\/", r"\\", "😀"]
QUANTIFIERS = ["", "", "", "*", "+", "?", "*?", "+?", "{2}", "{1,3}", "{0,}", "{,2}"]
CHARACTERS = ["a", "b", "A", "B", "1", "é", "É", "😀", " ", "\n", "\r", "\t", "\u00a0", "\u2028", "_", "-", ".", "x", "ab",
              "\\", "/", "\x00", "k"]


def test_generated_patterns_match_what_they_match_in_javascript_or_javascript_refuses_them_too() -> None:
    """400 patterns drawn (seeded) from JavaScript's tokens and quantifiers, 7 flag sets, 60 answers."""
    draw = random.Random(7)
    patterns = sorted({"".join(draw.choice(ATOMS) + draw.choice(QUANTIFIERS) for _ in range(draw.randint(1, 5)))
                       + ("|" + draw.choice(ATOMS) if draw.random() < 0.2 else "") for _ in range(400)})
    answers = sorted({"".join(draw.choice(CHARACTERS) for _ in range(draw.randint(0, 6))) for _ in range(60)})
    flags = ["", "i", "m", "s", "u", "y", "ims"]
    theirs = node(JS_RESULTS, {"patterns": patterns, "flags": flags, "inputs": answers})
    assert isinstance(theirs, dict)
    wrong: list[str] = []
    for pattern, flag in itertools.product(patterns, flags):
        said = theirs[f"{pattern}/{flag}"]
        try:
            compiled = compile_js_regex(pattern, flag)
        except ValueError as exc:
            if said is not None:
                wrong.append(f"/{pattern}/{flag}: refused ({exc}), JavaScript runs it")
            continue
        if said is None:
            wrong.append(f"/{pattern}/{flag}: run, JavaScript refuses it")
            continue
        wrong += [f"/{pattern}/{flag} on {text!r}: JavaScript {'matches' if matched else 'does not'}"
                  for text, matched in zip(answers, said, strict=True) if compiled.test(text) != matched]
    assert not wrong, "\n".join(wrong[:40])


def test_generated_nested_groups_with_references_match_as_in_javascript_or_are_refused() -> None:
    """Groups inside repeated groups, referred to before, inside and after the repetition: JavaScript
    empties a repeated group's captures at each round, which only a reference can observe. Every
    pattern run here must match what JavaScript matches; the refused ones are the references into a
    repeated group."""
    draw = random.Random(11)
    inner = ["(a)", "(b)", "(a)?", "(a|b)", "a", "b", r"\1", r"\2", "(?:a)", "(?<n>a)"]
    quantifiers = ["", "?", "*", "+", "{2}", "{1,2}", "{0,1}", "*?"]

    def pattern() -> str:
        alternatives = ["".join(draw.choice(inner) for _ in range(draw.randint(1, 2))) for _ in range(draw.randint(1, 2))]
        body = draw.choice(["(?:", "("]) + "|".join(alternatives) + ")" + draw.choice(quantifiers)
        tail = "".join(draw.choice(["", r"\1", r"\2", "a", "b"]) for _ in range(2))
        return "^" * draw.randint(0, 1) + body + tail + "$" * draw.randint(0, 1)

    patterns = sorted({pattern() for _ in range(400)})
    answers = sorted({"".join(draw.choice("ab") for _ in range(draw.randint(0, 5))) for _ in range(40)})
    theirs = node(JS_RESULTS, {"patterns": patterns, "flags": [""], "inputs": answers})
    assert isinstance(theirs, dict)
    wrong: list[str] = []
    refused = 0
    for pattern_text in patterns:
        said = theirs[f"{pattern_text}/"]
        try:
            compiled = compile_js_regex(pattern_text, "")
        except ValueError as exc:
            refused += 1
            if said is not None and "repeated group" not in str(exc):
                wrong.append(f"/{pattern_text}/: refused ({exc}), JavaScript runs it")
            continue
        if said is None:
            wrong.append(f"/{pattern_text}/: run, JavaScript refuses it")
            continue
        wrong += [f"/{pattern_text}/ on {text!r}: JavaScript {'matches' if matched else 'does not'}"
                  for text, matched in zip(answers, said, strict=True) if compiled.test(text) != matched]
    assert not wrong, "\n".join(wrong[:40])
    assert 0 < refused < len(patterns) / 2  # the draw holds both kinds
