"""Every error agentv-gate raises on purpose, in one module, so one `except` can mean one thing.

    GateError                       the message is for the user: located, secrets scrubbed
    ├── NoCasesError                exit 3: the paths hold no eval case, so there is nothing to gate on
    ├── UsageError                  exit 2: the command line asks for something impossible
    ├── ConfigError                 exit 2: a file the run depends on cannot be used
    │   ├── EvalFileError           one located problem (the loader turns it into a Problem)
    │   ├── TargetsConfigError      targets.yaml, or one target in it
    │   └── UnknownEvaluatorError   a config class no evaluator is registered for (a wiring bug)
    ├── ReportError                 exit 2: a report cannot be written, or read back for merge
    │   └── ReportWriteError
    │       └── ResultsReadError
    └── CaseError                   never reaches main: it becomes one case's `error` row
        ├── ProviderError           a target or judge model gave no answer (after its retries)
        │   └── HttpCallError       (transport/http_policy.py) carries .status and .retries
        └── JudgeError              a judge script or a judge reply was unusable
            ├── PromptTemplateError
            └── JudgeReplyError

Only `cli.main` turns these into exit codes; anything else that reaches it is a bug of ours and
exits `EXIT_INTERNAL`. Commands raise; they do not print-and-return.
Inside a run, errors stay data: the loader turns `EvalFileError` into a `Problem`, and the
orchestrator turns a `CaseError` into the case's row, so one broken case never stops the others.

Two classes keep `ValueError` as a second base: code that parses values (`float()`, pydantic)
and code that parses targets or judge replies share `except ValueError` clauses that must keep
catching them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

EXIT_OK = 0
"""Every case ran and passed (validate: every file is valid)."""
EXIT_FAILED = 1
"""Some case failed or errored (validate: some file has problems)."""
EXIT_USAGE = 2
"""Configuration or usage error: bad flags, eval files or targets that do not load, a report that cannot be written."""
EXIT_NO_CASES = 3
"""The paths given hold no eval case: not a pass (nothing was checked), not a broken configuration either."""
EXIT_INTERNAL = 4
"""A bug in agentv-gate; the reports of the cases that finished are still written."""
EXIT_NOT_RUN = 5
"""`run --skip-missing-env`: every case that ran passed, but some were not run because environment
variables their targets or judges read are unset (a fork's pull request): not a pass."""
EXIT_SIGINT, EXIT_SIGTERM = 130, 143
"""Interrupted (Ctrl-C, or SIGTERM from a cancelled CI job); the reports of the cases that finished are written."""

EXIT_CODES: dict[int, str] = {
    EXIT_OK: "every case passed",
    EXIT_FAILED: "a case failed or errored",
    EXIT_USAGE: "configuration or usage error",
    EXIT_NO_CASES: "no eval cases found",
    EXIT_INTERNAL: "internal error (a bug in agentv-gate)",
    EXIT_NOT_RUN: "cases not run: environment variables unset (--skip-missing-env)",
    EXIT_SIGINT: "interrupted (Ctrl-C)",
    EXIT_SIGTERM: "interrupted (SIGTERM)",
}
"""The one table of exit codes; README.md and action.yml's `exit-code` output state the same (a test checks)."""


class Located(Protocol):
    """A problem at a file:line, as `problems.Problem` is (this module sits below it, so it names the shape only)."""

    @property
    def file(self) -> Path: ...
    @property
    def line(self) -> int: ...
    @property
    def message(self) -> str: ...
    @property
    def expected(self) -> str | None: ...
    @property
    def severity(self) -> str: ...


class GateError(Exception):
    """Base of every deliberate error; `exit_code` is what `cli.main` returns for it.

    `problems` are the located problems behind it, when it has any (eval files that do not load,
    targets.yaml, a corrupt shard's line): `cli.main` annotates each where it is in GitHub Actions.
    """

    exit_code = EXIT_USAGE

    def __init__(self, *args: object, problems: Sequence[Located] = ()) -> None:
        super().__init__(*args)
        self.problems: tuple[Located, ...] = tuple(problems)


class NoCasesError(GateError):
    """The paths hold no eval file, or no case: a gate that checked nothing must not pass."""

    exit_code = EXIT_NO_CASES


class UsageError(GateError):
    """The command line asks for something impossible (bad flag value, nothing to run)."""


class ConfigError(GateError):
    """A file the run depends on cannot be used: the run stops before any case is called."""


class EvalFileError(ConfigError):
    """Raised inside the loader for one located problem; caught and turned into a Problem."""

    def __init__(self, line: int, message: str, expected: str | None = None) -> None:
        super().__init__(message)
        self.line = line
        self.message = message
        self.expected = expected


class SkippedEvaluator(EvalFileError):
    """An evaluator entry AgentV accepts and skips (it runs nothing): said as a located warning, not run."""


class TargetsConfigError(ConfigError, ValueError):
    """targets.yaml (or one target in it) cannot be used. The message names file, target and field."""


class UnknownEvaluatorError(ConfigError):
    """An evaluator config class with no evaluator registered for it."""


class ReportError(GateError):
    """A report could not be written or read; the message names the file and the reason."""


class ReportWriteError(ReportError):
    """Disk full, permission denied, a folder where a file should be: said plainly, never a traceback."""


class ResultsReadError(ReportWriteError):
    """A results file cannot be read back (missing, unreadable, corrupt in the middle).

    A subclass of `ReportWriteError` so that handling report I/O failures with one `except`
    clause covers reading back shard files too.
    """


class CaseError(GateError):
    """Something one case needed broke; it becomes that case's error row, never a crash."""

    exit_code = EXIT_FAILED


class ProviderError(CaseError):
    """A provider could not produce an answer (after its retries). The message is user-facing."""


class JudgeError(CaseError):
    """A judge script, prompt template or judge reply was unusable."""


class PromptTemplateError(JudgeError):
    """The prompt could not be produced (script failed, file unreadable). The message says why."""

    def __init__(self, message: str, raw: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.raw = raw or {}


class JudgeReplyError(JudgeError, ValueError):
    """The reply held no usable verdict. The message says what was expected and what came."""
