"""One line at the end of a run that says what went wrong when many cases broke the same way.

The usual first-day failure of a Python team: the agent (or a judge, or a target's healthcheck)
imports the team's own package, and the run happens in an environment that does not have it:
pre-commit's own virtualenv (`language: python` hooks), or a shell without the team's virtualenv
activated. Every case then errors with the same `ModuleNotFoundError`; the reports list each, and
this says once why, and what to use instead.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Iterable, Mapping

from ..report.rows import ReportedCase

_MISSING_MODULE = re.compile(r"No module named '?([A-Za-z_][\w.]*)'?")


def in_pre_commit_virtualenv(environ: Mapping[str, str] = os.environ, prefix: str = sys.prefix) -> bool:
    """Whether this process is a pre-commit hook running in pre-commit's own virtualenv
    (`language: python`): pre-commit sets PRE_COMMIT=1 and builds the hook's environment in a
    `py_env-*` folder of its store."""
    return environ.get("PRE_COMMIT") == "1" and "py_env-" in prefix


def missing_modules(results: Iterable[ReportedCase]) -> dict[str, int]:
    """The modules the cases' errors and misses say could not be imported -> how many cases said so."""
    found: dict[str, int] = {}
    for result in results:
        names = {m.group(1) for text in (result.error or "", *result.misses) for m in _MISSING_MODULE.finditer(text)}
        for name in names:
            found[name] = found.get(name, 0) + 1
    return found


def import_hint(results: Iterable[ReportedCase], environ: Mapping[str, str] = os.environ,
                prefix: str = sys.prefix) -> str | None:
    """One message when cases failed to import a module, naming the Python that ran them; inside
    pre-commit's virtualenv, the hook to use instead."""
    modules = missing_modules(results)
    if not modules:
        return None
    named = ", ".join(f"'{name}' ({count} case{'s' if count != 1 else ''})" for name, count in sorted(modules.items()))
    if in_pre_commit_virtualenv(environ, prefix):
        return (f"the agent or its judges could not import {named}: this hook runs in pre-commit's own "
                f"virtualenv ({prefix}), which has agentv-gate and its additional_dependencies only. "
                "For an agent with its own packages use the hooks that run in your environment, "
                "`agentv-gate-system` or `agentv-gate-all-system` (language: system; install agentv-gate "
                "in that environment), or a `repo: local` hook (docs/pre-commit.md)")
    python = shutil.which("python3", path=environ.get("PATH")) or "no python3 on PATH"
    return (f"the agent or its judges could not import {named}; they run with the python3 first on PATH "
            f"({python}): activate the environment that has your packages, or install them there")
