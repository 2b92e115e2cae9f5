"""Workspace lifecycle hooks as AgentV 2.19 runs them: before_all, before_each, after_each, after_all.

Each hook is a command given JSON on stdin (`workspace_path`, `test_id`, `eval_run_id`,
`case_input`, `case_metadata`). A `before_*` hook that fails (non-zero exit, timeout, cannot start)
makes the cases it prepares execution errors carrying its output: an agent run on an unprepared
workspace would be scored on the wrong thing. An `after_*` hook that fails only warns. After-hooks
always run once their before-side ran: `after_each` after every started case, `after_all` when
the run ends, however it ends (also on Ctrl-C and SIGTERM).

`before_all` runs once per suite, when its first case starts; `after_all` runs for every suite
whose cases started, at the end of the run (cases of several suites may run side by side, so
the end of the run is the first moment a suite is known to be done). A suite with hooks or a
workspace template has a workspace of its own, made when its first case starts: a copy of the
template (`workspace_copy.py`), else an empty folder, as AgentV 2.19 makes one. `workspace_path` is
that folder, a `cli` target runs in it, and since the suite's cases share it they run one at a time,
each holding it from its `before` to its `after`. A hook without `cwd` runs in the eval file's
folder, as AgentV runs it.

With AgentV 4.42's `isolation: per_test` each case gets a workspace of its own instead (a copy of the
template, else an empty folder), made when the case starts: its `before_all` runs in it for that case
alone (with the case's `test_id` and input, as 4.42 runs it), then its reset and `before_each`, and its
baseline is taken after them; `after_each` runs in it, and it is removed when the case ends. `after_all`
never runs (4.42 runs it only on a shared workspace), and such cases do not wait for one another.
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..models import EvalCase, HookConfig
from ..redaction import redact
from ..transport.process import run_script
from .file_changes import initialize_baseline, reset_workspace
from .repos import RepoError, materialize, reset_repos
from .workspace_copy import copy_template, empty_workspace, remove_workspace

OUTPUT_CHARS = 4000
"""What a row keeps of a hook's output: its end, where the error usually is."""


@dataclass(frozen=True)
class HookRun:
    name: str
    output: str
    failure: str | None

    def describe(self) -> str:
        """`before_all hook failed (exit 3): <output>`, for a row's error or a warning."""
        tail = f": {self.output}" if self.output else ""
        return f"{self.name} hook {self.failure}{tail}"


def _has_workspace(case: EvalCase) -> bool:
    """Hooks, a template or repos: the case runs in a workspace (its suite's, or its own)."""
    w = case.workspace
    return w is not None and (w.template is not None or bool(w.hooks) or bool(w.repos))


def _per_test(case: EvalCase) -> bool:
    """A case of an AgentV 4.x suite with `isolation: per_test`: its workspace is its own."""
    return case.workspace is not None and case.workspace.isolation == "per_test" and case.generation == "4.x"


def _eval_dir(case: EvalCase) -> Path:
    return (case.suite_file or case.source_file).resolve().parent


SUITE_TEST_IDS = {"before_all": "__before_all__", "after_all": "__after_all__"}
"""The `test_id` AgentV gives a suite's hooks, which run for no one case."""

_ARG_VARIABLE = re.compile(r"\{\{(\w+)\}\}", re.ASCII)


def hook_payload(hook: HookConfig, case: EvalCase | None, eval_run_id: str, workspace: Path) -> dict[str, Any]:
    """What a hook reads on stdin, as AgentV's `executeWorkspaceScript` writes it: `case_input` is the
    case's question (its input's text parts), and a suite's hooks have a `test_id` of their own."""
    return {
        "workspace_path": str(workspace),
        "test_id": case.id if case is not None else SUITE_TEST_IDS.get(hook.name),
        "eval_run_id": eval_run_id,
        "case_input": case.question if case is not None else None,
        "case_metadata": case.metadata if case is not None else None,
    }


def hook_argv(argv: list[str], payload: dict[str, Any]) -> list[str]:
    """`{{workspace_path}}`, `{{test_id}}`, `{{eval_run_id}}`, `{{case_input}}` and `{{case_metadata}}`
    in a hook's arguments replaced as AgentV replaces them (a missing input or metadata as an empty
    string, metadata as compact JSON); any other `{{name}}` is left as written."""
    values = {key: "" if value is None else value for key, value in payload.items()}
    if payload["case_metadata"] is not None:
        values["case_metadata"] = json.dumps(payload["case_metadata"], ensure_ascii=False, separators=(",", ":"))
    return [_ARG_VARIABLE.sub(lambda m: str(values.get(m.group(1), m.group(0))), arg) for arg in argv]


def run_hook(hook: HookConfig, case: EvalCase | None, eval_run_id: str, workspace: Path,
             eval_dir: Path | None = None) -> HookRun:
    """Run one hook to completion; never raises for the hook (a failure is in `HookRun.failure`).
    It runs in its `cwd`, else `eval_dir` (the eval file's folder), else `workspace`."""
    payload = hook_payload(hook, case, eval_run_id, workspace)
    try:
        result = run_script(hook_argv(hook.argv, payload), json.dumps(payload), hook.timeout_ms / 1000,
                            cwd=hook.cwd or eval_dir or workspace, teardown=hook.name.startswith("after"))
    except Exception as exc:  # noqa: BLE001 - e.g. a NUL byte in an argument: a before_all that raised
        # left its suite started with no outcome, and the suite's other cases ran unprepared (and passed)
        return HookRun(hook.name, "", f"failed (could not start: {type(exc).__name__}: {exc}; "
                                      f"{hook.source_file}:{hook.source_line})")
    # Redacted whole, then cut: a key the cut falls inside of would no longer be recognised.
    output = redact("\n".join(part.strip() for part in (result.stdout, result.stderr) if part.strip()))
    if len(output) > OUTPUT_CHARS:
        output = "…" + output[-OUTPUT_CHARS:]
    failure = None
    if not result.ok:
        failure = f"failed ({result.failure() or 'did not succeed'}; {hook.source_file}:{hook.source_line})"
    return HookRun(hook.name, output, failure)


_BUSY_SECONDS = 10.0
"""How long `finish` waits for a case to stop working in its own workspace (its scripts are killed by then)."""


@dataclass
class _Own:
    """The workspace of an `isolation: per_test` case, and a lock held while the gate prepares or tears it down."""

    path: Path
    busy: threading.Lock = field(default_factory=threading.Lock)


@dataclass
class _Suite:
    lock: threading.Lock = field(default_factory=threading.Lock)
    before_all: HookRun | None = None
    started: bool = False
    after_all: HookConfig | None = None
    case: EvalCase | None = None
    """The case that started the suite: its eval file's folder is where after_all runs."""
    workspace: Path | None = None
    """The suite's workspace (its template's copy, else an empty folder), once its first case made it."""
    workspace_failure: str | None = None
    baseline: str | None = None
    """The workspace's git baseline, once made after `before_all` (see file_changes.py)."""
    one_at_a_time: threading.Lock = field(default_factory=threading.Lock)
    """Held by the case using the workspace, from its `before` to its `after`."""


class WorkspaceHooks:
    """The hooks of one run. Thread-safe: cases of a suite may start on several workers at once."""

    def __init__(self, eval_run_id: str | None = None, repo_cache: Path = Path(".agentv-gate-cache/repos")) -> None:
        self.eval_run_id = eval_run_id or uuid.uuid4().hex
        self.repo_cache = repo_cache
        """Where a workspace's `repos` are mirrored between runs (execution/repos.py)."""
        self.warnings: list[str] = []
        """What failed without failing a case (after_* hooks), for the command to say."""
        self._suites: dict[str, _Suite] = {}
        self._lock = threading.Lock()
        self._holding: dict[int, _Suite] = {}
        """id(case) -> its suite, for each case holding its suite's workspace copy."""
        self._own_baselines: dict[int, str | None] = {}
        """id(case) -> the baseline taken after its `before_each` (AgentV 4.x): its file changes are its own."""
        self._own_workspaces: dict[int, _Own] = {}
        """id(case) -> the workspace of a case of an `isolation: per_test` suite, while it runs."""
        self._trial_starts: dict[int, str] = {}
        """id(case) -> a commit of the suite's workspace as the case's first trial found it (see `next_trial`)."""
        self._finished = False
        """Set by `finish`: a case still running (an interrupted run) makes no new workspace."""

    def _suite(self, name: str) -> _Suite:
        with self._lock:
            return self._suites.setdefault(name, _Suite())

    def workspace_of(self, case: EvalCase) -> Path | None:
        """The workspace `case` runs in, or None (it has no hooks and no template)."""
        if not _has_workspace(case):
            return None
        if _per_test(case):
            with self._lock:
                own = self._own_workspaces.get(id(case))
            return own.path if own is not None else None
        return self._suite(case.suite).workspace

    def baseline_of(self, case: EvalCase) -> str | None:
        """The git baseline of the workspace `case` runs in, if it has one: in an AgentV 4.x file, the one
        taken after its `before_each` ran, as 4.42 takes it; otherwise the suite's, taken after `before_all`."""
        if self.workspace_of(case) is None:
            return None
        with self._lock:
            if id(case) in self._own_baselines:
                return self._own_baselines[id(case)]
        return self._suite(case.suite).baseline

    def before(self, case: EvalCase, trials: int = 1) -> tuple[dict[str, str], str | None]:
        """Run what prepares `case` (to run `trials` trials): (outputs for the row, why the case cannot run, or None)."""
        hooks = case.workspace.hooks if case.workspace is not None else {}
        template = case.workspace.template if case.workspace is not None else None
        if not _has_workspace(case):
            return {}, None
        if _per_test(case):
            return self._before_own(case)
        suite = self._suite(case.suite)
        suite.one_at_a_time.acquire()
        with self._lock:
            self._holding[id(case)] = suite
        with suite.lock:  # the first case of a suite runs before_all; the others wait for it
            if not suite.started:
                suite.started = True
                suite.after_all = hooks.get("after_all")
                suite.case = case
                try:
                    links = case.workspace.template_roots if case.workspace is not None else ()
                    suite.workspace = copy_template(template, links) if template is not None else empty_workspace()
                except OSError as exc:
                    source = f" from template {template}" if template is not None else ""
                    suite.workspace_failure = f"Failed to create shared workspace{source}: {exc}"
                with self._lock:
                    ending = self._finished
                if ending and suite.workspace is not None:  # made as the run ended: `finish` has passed it by
                    remove_workspace(suite.workspace)
                    suite.workspace, suite.workspace_failure = None, "the run is ending"
                if suite.workspace is not None and case.workspace is not None and case.workspace.repos:
                    failure = self._repos(case, suite.workspace)
                    if failure is not None:
                        remove_workspace(suite.workspace)
                        suite.workspace, suite.workspace_failure = None, failure
                if "before_all" in hooks and suite.workspace is not None:
                    suite.before_all = run_hook(hooks["before_all"], None, self.eval_run_id, suite.workspace,
                                                _eval_dir(case))
                if suite.workspace is not None and not (suite.before_all and suite.before_all.failure):
                    suite.baseline = initialize_baseline(suite.workspace)
        if trials > 1 and suite.workspace is not None:
            # AgentV runs a later trial on what the earlier one left; the gate starts each where the first did
            # (`next_trial`), before its reset and before_each, so no trial passes on another trial's files
            start = initialize_baseline(suite.workspace)
            if start is not None:
                with self._lock:
                    self._trial_starts[id(case)] = start
        return self._before_in_suite(case, suite)

    def _before_in_suite(self, case: EvalCase, suite: _Suite) -> tuple[dict[str, str], str | None]:
        """`before` for a case in its suite's started workspace: its reset, its `before_each` and (4.x) its baseline."""
        hooks = case.workspace.hooks if case.workspace is not None else {}
        outputs: dict[str, str] = {}
        if suite.workspace is None:
            return outputs, suite.workspace_failure or "the suite's workspace is gone"
        if suite.before_all is not None:
            outputs["before_all_output"] = suite.before_all.output
            if suite.before_all.failure:
                return outputs, suite.before_all.describe()
        four_x = case.generation == "4.x"
        reset = case.workspace.resets.get("before_each") if case.workspace is not None and four_x else None
        if reset is not None:
            try:
                self._reset(case, suite.workspace, reset[0], suite.baseline)
            except OSError as exc:
                return outputs, f"before_each reset failed ({reset[1]}:{reset[2]}): {exc}"
        if "before_each" in hooks:
            ran = run_hook(hooks["before_each"], case, self.eval_run_id, suite.workspace, _eval_dir(case))
            outputs["before_each_output"] = ran.output
            if ran.failure:
                return outputs, ran.describe()
            if four_x:  # 4.42: what before_each did is not the agent's change
                baseline = initialize_baseline(suite.workspace)
                with self._lock:
                    self._own_baselines[id(case)] = baseline
        return outputs, None

    def next_trial(self, case: EvalCase) -> tuple[dict[str, str], str | None]:
        """Between two trials of `case`, which AgentV prepares each as a run of the case of its own: the last
        trial's after side (its reset and `after_each`; a workspace of its own removed), then the next one's
        before side (a fresh workspace of its own and its `before_all`, or, in the suite's workspace, still
        held, its reset, `before_each` and baseline), so no trial is judged on what another left."""
        if not _has_workspace(case):
            return {}, None
        outputs = self._after_each(case)
        if _per_test(case):
            before, failure = self._before_own(case)
        else:
            suite = self._suite(case.suite)
            with self._lock:
                start = self._trial_starts.get(id(case))
            if start is not None and suite.workspace is not None:
                try:  # back to where the first trial started: tracked files restored, new untracked ones gone
                    reset_workspace(suite.workspace, "fast", start)
                except OSError as exc:
                    return outputs, f"the workspace could not be restored for the next trial: {exc}"
            before, failure = self._before_in_suite(case, suite)
        return {**outputs, **before}, failure

    def _before_own(self, case: EvalCase) -> tuple[dict[str, str], str | None]:
        """`before` for a case of an `isolation: per_test` suite: a workspace, before_all, reset and before_each
        of its own, then its baseline (4.42's prepareEvalCaseWorkspace with no shared workspace)."""
        assert case.workspace is not None
        template = case.workspace.template
        try:
            workspace = copy_template(template, case.workspace.template_roots) if template is not None \
                else empty_workspace()
        except OSError as exc:
            return {}, f"Failed to create workspace{f' from template {template}' if template else ''}: {exc}"
        own = _Own(workspace)
        with own.busy:  # `finish` waits for it: a git command or a hook writing in it would make it again
            with self._lock:
                if self._finished:  # the run ended (Ctrl-C, SIGTERM) while this one was made: nothing may outlive it
                    remove_workspace(workspace)
                    return {}, "the run is ending"
                self._own_workspaces[id(case)] = own
            return self._prepare_own(case, workspace)

    def _prepare_own(self, case: EvalCase, workspace: Path) -> tuple[dict[str, str], str | None]:
        assert case.workspace is not None
        hooks = case.workspace.hooks
        outputs: dict[str, str] = {}
        if case.workspace.repos:
            failure = self._repos(case, workspace)
            if failure is not None:
                return outputs, failure
        for name in ("before_all", "before_each"):
            reset = case.workspace.resets.get(name)
            if reset is not None:
                try:
                    self._reset(case, workspace, reset[0], None)
                except OSError as exc:
                    return outputs, f"{name} reset failed ({reset[1]}:{reset[2]}): {exc}"
            if name in hooks:
                ran = run_hook(hooks[name], case, self.eval_run_id, workspace, _eval_dir(case))
                outputs[f"{name}_output"] = ran.output
                if ran.failure:
                    return outputs, ran.describe()
        baseline = initialize_baseline(workspace)
        with self._lock:
            self._own_baselines[id(case)] = baseline
        return outputs, None

    def _repos(self, case: EvalCase, workspace: Path) -> str | None:
        """Clone the case's `repos` into `workspace`; why that failed (located at the repository), or None."""
        assert case.workspace is not None
        for spec in case.workspace.repos:
            try:
                materialize(spec, workspace, self.repo_cache)
            except (RepoError, OSError) as exc:
                return f"Failed to materialize repos: {exc} ({spec.source_file}:{spec.source_line})"
        return None

    @staticmethod
    def _reset(case: EvalCase, workspace: Path, mode: str, baseline: str | None) -> None:
        """A hook's reset: with repos in `mode: temp`, each repository back to its commit (4.42's
        RepoManager.reset); otherwise the workspace back to its baseline (4.42 keeps pooled repos in a slot,
        and resets its root)."""
        if case.workspace is not None and case.workspace.repos and not case.workspace.pooled:
            reset_repos(case.workspace.repos, workspace, mode)
        else:
            reset_workspace(workspace, mode, baseline)

    def after(self, case: EvalCase) -> dict[str, str]:
        """Run `after_each` for a case that was started; its failure is a warning, its output the row's."""
        with self._lock:
            holding = self._holding.pop(id(case), None)
            self._trial_starts.pop(id(case), None)
        try:
            return self._after_each(case)
        finally:
            if holding is not None:
                holding.one_at_a_time.release()

    def _after_each(self, case: EvalCase) -> dict[str, str]:
        hook = case.workspace.hooks.get("after_each") if case.workspace is not None else None
        suite = self._suite(case.suite)
        workspace = suite.workspace
        with self._lock:
            own_baseline = self._own_baselines.pop(id(case), None)
            own = self._own_workspaces.get(id(case))
        if own is not None:
            with own.busy:
                try:
                    return self._after_own(case, hook, own.path, own_baseline)
                finally:
                    remove_workspace(own.path)
                    with self._lock:
                        self._own_workspaces.pop(id(case), None)
        reset = case.workspace.resets.get("after_each") if case.workspace is not None and \
            case.generation == "4.x" else None
        if reset is not None and workspace is not None:
            try:
                self._reset(case, workspace, reset[0], suite.baseline)
            except OSError as exc:  # as AgentV: an after_each reset that failed fails no case
                self._warn(f"{reset[1]}:{reset[2]}: case '{case.id}': after_each reset failed: {exc}")
        if hook is None or workspace is None:  # no workspace was made: nothing of this case's to clean up
            return {}
        ran = run_hook(hook, case, self.eval_run_id, workspace, _eval_dir(case))
        if ran.failure:
            self._warn(f"{case.source_file}:{case.source_line}: case '{case.id}': {ran.describe()}")
        return {"after_each_output": ran.output}

    def _after_own(self, case: EvalCase, hook: HookConfig | None, workspace: Path, baseline: str | None) -> dict[str, str]:
        """`after_each` of a case with a workspace of its own (`isolation: per_test`): its reset, then its hook."""
        reset = case.workspace.resets.get("after_each") if case.workspace is not None else None
        if reset is not None:
            try:
                self._reset(case, workspace, reset[0], baseline)
            except OSError as exc:
                self._warn(f"{reset[1]}:{reset[2]}: case '{case.id}': after_each reset failed: {exc}")
        if hook is None:
            return {}
        ran = run_hook(hook, case, self.eval_run_id, workspace, _eval_dir(case))
        if ran.failure:
            self._warn(f"{case.source_file}:{case.source_line}: case '{case.id}': {ran.describe()}")
        return {"after_each_output": ran.output}

    def finish(self) -> None:
        """Run every started suite's `after_all`, once; failures are warnings. The workspaces of cases still
        running (an interrupted run's: the process is on its way out) are removed too."""
        with self._lock:
            self._finished = True
            suites = list(self._suites.items())
            left = list(self._own_workspaces.values())
        for own in left:  # each once what its case does in it now (scripts are killed first) has ended
            taken = own.busy.acquire(timeout=_BUSY_SECONDS)
            try:
                remove_workspace(own.path)
            finally:
                if taken:
                    own.busy.release()
        for name, suite in suites:
            with suite.lock:
                hook, case, suite.after_all = suite.after_all, suite.case, None
                workspace, suite.workspace = suite.workspace, None
            if hook is not None and case is not None and workspace is not None:
                ran = run_hook(hook, None, self.eval_run_id, workspace, _eval_dir(case))
                if ran.failure:
                    self._warn(f"suite {name}: {ran.describe()}")
            if workspace is not None:
                remove_workspace(workspace)

    def _warn(self, message: str) -> None:
        with self._lock:
            self.warnings.append(message)
