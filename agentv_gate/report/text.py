"""Making untrusted text safe to show: answers, judge reasoning and eval ids reach XML, CI logs and Markdown.

Every reporter passes text from the agent or a judge through `clean` first, so a single place decides
what counts as dangerous: terminal escape sequences (they can rewrite a log line or hide text),
characters XML 1.0 forbids (one NUL makes a whole JUnit file unparseable), lone surrogates (they
cannot be encoded as UTF-8 at all) and bidirectional overrides (they make text read differently
from what it is). Sequences are dropped; single bad characters become U+FFFD so a reader can see
that something was there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..redaction import strip_ansi

REPLACEMENT = "\ufffd"

# C0 controls except tab and newline, DEL and C1, UTF-16 surrogates, U+FFFE/U+FFFF (not XML
# characters), and the bidi embedding/override/isolate controls (Trojan-Source style reordering).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff\u202a-\u202e\u2066-\u2069]")
_WHITESPACE_RUN = re.compile(r"\s+")


def clean(text: object) -> str:
    """Text that is safe in XML 1.0, UTF-8 files, terminals and CI logs; newlines and tabs are kept.

    CRLF and lone CR become LF first: a bare CR in a log overwrites the line it is on.
    """
    if text is None:
        return ""
    s = text if isinstance(text, str) else str(text)
    if _UNSAFE.search(s) is None:  # no CR, ESC, 8-bit CSI or unsafe character: already clean (most text)
        return s
    s = s.replace("\r\n", "\n").replace("\r", "\n")
    s = strip_ansi(s)
    return _UNSAFE.sub(REPLACEMENT, s)


def escape_html(text: str, quote: bool = True) -> str:
    """`html.escape(text, quote)`, without importing `html`: its entity table (`html.entities`) is 5 ms of
    every run's start-up, for a function that is five replacements."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace('"', "&quot;").replace("'", "&#x27;") if quote else text


def one_line(text: object) -> str:
    """`clean`, then every whitespace run (newlines included) folded to one space, for table cells."""
    return _WHITESPACE_RUN.sub(" ", clean(text)).strip()


def truncate(text: str, limit: int) -> str:
    """At most `limit` characters of `text`, then a note saying how much was cut (never silently)."""
    if limit < 0 or len(text) <= limit:
        return text
    return f"{text[:limit]}… [truncated: {len(text) - limit:,} more characters]"


def inert_log_text(text: str) -> str:
    """Break the GitHub runner's legacy `##[command]` syntax, which it recognises anywhere in a line.

    The runner tries the `::command::` form (only at the start of a line) and, failing that, looks
    for `##[` at any position (actions/runner ActionCommand.TryParse), so untrusted text printed
    to a log could run `##[add-mask]`, `##[set-output ...]` or `##[stop-commands]`. A space after
    the `##` makes it plain text; looping handles overlaps like `###[`.
    """
    while "##[" in text:
        text = text.replace("##[", "## [")
    return text


def inert_json(text: str) -> str:
    """JSON text (as `json.dumps` writes it) whose `##[` cannot run a legacy workflow command.

    Outside its strings JSON has no `#`, so every `##[` is inside a string, where `\\u005b` is the
    same `[` to any JSON reader; looping handles overlaps like `###[`.
    """
    while "##[" in text:
        text = text.replace("##[", "##\\u005b")
    return text


def inert_lines(text: object) -> str:
    """Text for a CI log whose every line stays plain text: `clean`, `##[` broken, and a line that would
    start with `::` (the runner skips leading blanks first) behind a `| ` of ours.

    For messages that quote what a pull request wrote (an eval file's key, a target's name).
    """
    lines = []
    for line in clean(text).split("\n"):
        line = inert_log_text(line)
        lines.append(f"| {line}" if line.lstrip().startswith("::") else line)
    return "\n".join(lines)


def case_label(result: object, with_target: bool) -> str:
    """The case's id, with `[target]` when the run used several targets (a matrix names each row)."""
    label = one_line(getattr(result, "eval_id", ""))
    target = getattr(result, "target", "")
    return f"{label} [{one_line(target)}]" if with_target and target else label


def several_targets(results: Iterable[object]) -> bool:
    return len({getattr(r, "target", "") for r in results}) > 1
