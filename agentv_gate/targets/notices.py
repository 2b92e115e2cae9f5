"""The one place in the targets layer that may print: one-line notices on stderr.

Why here: a provider learns things mid-run that the user must hear about (a server refused a
parameter, so it is left out for the rest of the run), and it learns them inside worker threads,
under evaluators, which never print. Those notices are rare, once per target and adjustment, so
they are written at once rather than collected: a line shows up while the run goes on, next to
the target it is about. A lock keeps lines from eight worker threads whole.
"""

from __future__ import annotations

import re
import sys
import threading
from typing import TextIO

from ..redaction import strip_ansi

_lock = threading.Lock()
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _inert(text: str) -> str:
    """`text` as plain log text: terminal escapes removed, control characters shown as U+FFFD, and the
    GitHub runner's legacy `##[command]` (recognised anywhere in a line) broken up.

    A notice quotes the server's error (its message, type and code), which is not ours to trust; this
    is `report.text.clean` and `inert_log_text`, which the targets layer may not import.
    """
    text = _CONTROL.sub("\ufffd", strip_ansi(text))
    while "##[" in text:
        text = text.replace("##[", "## [")
    return text


def notice(line: str, stream: TextIO | None = None) -> None:
    """Write `line` (already scrubbed of secrets) on stderr as one `agentv-gate: ...` line."""
    out = stream if stream is not None else sys.stderr
    text = _inert(" ".join(line.split()))
    with _lock:
        try:
            # On a terminal, first clear a live progress line so the notice does not run into it.
            prefix = "\r\x1b[K" if out.isatty() else ""
            out.write(f"{prefix}agentv-gate: {text}\n")
            out.flush()
        except (OSError, ValueError):
            pass  # a closed stderr must not fail the call the notice is about
