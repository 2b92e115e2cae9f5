"""A workspace hook's output and outcome, through the public `run_hook` and `WorkspaceHooks`: a long
output keeps its end (where the error is), exactly at the cap it is kept whole, and a hook's failure
reaches the case it prepares. The CLI side is tests/commands/test_workspace_hooks_cli.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agentv_gate.execution.hooks import OUTPUT_CHARS, WorkspaceHooks, run_hook
from agentv_gate.models import EvalCase, HookConfig, WorkspaceConfig
from agentv_gate.redaction import forget_secrets, register_secrets


def hook(tmp_path: Path, code: str, name: str = "before_each", timeout_ms: int = 20_000) -> HookConfig:
    script = tmp_path / f"{name}.py"
    script.write_text(code, encoding="utf-8")
    return HookConfig(name=name, argv=[sys.executable, str(script)], timeout_ms=timeout_ms, cwd=tmp_path,
                      source_file=tmp_path / "s.eval.yaml", source_line=3)


def printing(text_chars: int, exit_code: int = 0) -> str:
    """A hook printing `text_chars` characters: 'head…' first, the error last."""
    return (f"import sys\nbody = 'H' * {text_chars - 9} + 'ERR: last'\nsys.stdout.write(body)\n"
            f"sys.exit({exit_code})\n")


@pytest.mark.parametrize(("chars", "cut"), [(OUTPUT_CHARS - 1, False), (OUTPUT_CHARS, False), (OUTPUT_CHARS + 1, True)])
def test_a_long_hook_output_keeps_its_end(tmp_path: Path, chars: int, cut: bool) -> None:
    ran = run_hook(hook(tmp_path, printing(chars, exit_code=2)), None, "run", tmp_path)
    assert ran.output.endswith("ERR: last")
    assert ran.output.startswith("…") is cut
    assert len(ran.output) == min(chars, OUTPUT_CHARS) + (1 if cut else 0)
    assert ran.failure is not None and ran.failure.startswith("failed (") and "s.eval.yaml:3)" in ran.failure
    assert ran.describe().startswith("before_each hook failed (") and ran.describe().endswith(": " + ran.output)


def test_stdout_and_stderr_are_both_kept_trimmed_and_a_secret_is_hidden_before_the_cut(tmp_path: Path) -> None:
    forget_secrets()
    register_secrets(["sk-hook-secret-123"])
    try:
        code = ("import sys\nprint('  out  ')\nsys.stderr.write('x' * 5000 + 'sk-hook-secret-123' + '\\n')\n")
        ran = run_hook(hook(tmp_path, code), None, "run", tmp_path)
    finally:
        forget_secrets()
    assert ran.failure is None
    assert ran.output.endswith("x***") and "sk-hook" not in ran.output and "123" not in ran.output[-10:]


def test_a_hook_that_succeeds_says_nothing_more(tmp_path: Path) -> None:
    ran = run_hook(hook(tmp_path, "print('ready')\n"), None, "run", tmp_path)
    assert (ran.output, ran.failure) == ("ready", None)
    silent = run_hook(hook(tmp_path, "pass\n"), None, "run", tmp_path)
    assert (silent.output, silent.failure) == ("", None)


def test_a_failure_without_output_is_described_without_a_colon(tmp_path: Path) -> None:
    ran = run_hook(hook(tmp_path, "import sys\nsys.exit(4)\n"), None, "run", tmp_path)
    assert ran.output == "" and ran.describe() == f"before_each hook {ran.failure}"


def test_a_hook_that_cannot_start_is_a_failure_naming_where_it_was_written(tmp_path: Path) -> None:
    broken = HookConfig(name="before_all", argv=["python3", "a\0b"], timeout_ms=1000, cwd=tmp_path,
                        source_file=tmp_path / "s.eval.yaml", source_line=7)
    ran = run_hook(broken, None, "run", tmp_path)
    assert ran.failure is not None and ran.failure.startswith("failed (could not start: ValueError")
    assert ran.failure.endswith("s.eval.yaml:7)")


def make_case(tmp_path: Path, case_id: str, hooks: dict[str, HookConfig]) -> EvalCase:
    return EvalCase(id=case_id, source_file=tmp_path / "s.eval.yaml", suite="s", question="q",
                    workspace=WorkspaceConfig(hooks=hooks))


def test_a_failing_before_all_fails_every_case_of_its_suite_once_and_after_all_runs_once(tmp_path: Path) -> None:
    log = tmp_path / "ran.log"
    record = f"import sys\nopen({str(log)!r}, 'a').write(sys.argv[0].rsplit('/', 1)[-1] + '\\n')\n"
    hooks = {"before_all": hook(tmp_path, record + "sys.exit('not ready')\n", "before_all"),
             "before_each": hook(tmp_path, record, "before_each"),
             "after_all": hook(tmp_path, record + "sys.exit('teardown broke')\n", "after_all")}
    run = WorkspaceHooks("run-1")
    for case_id in ("a", "b"):
        case = make_case(tmp_path, case_id, hooks)
        outputs, why = run.before(case)
        run.after(case)  # the suite's workspace is one case's at a time: from its `before` to its `after`
        assert why is not None and why.startswith("before_all hook failed (") and why.endswith(": not ready")
        assert outputs == {"before_all_output": "not ready"}
    run.finish()
    run.finish()
    assert log.read_text().split() == ["before_all.py", "after_all.py"]
    assert run.warnings == [run.warnings[0]] and run.warnings[0].startswith("suite s: after_all hook failed (")


def test_a_case_without_hooks_is_prepared_by_nothing(tmp_path: Path) -> None:
    run = WorkspaceHooks()
    assert run.before(make_case(tmp_path, "a", {})) == ({}, None)
    assert run.after(make_case(tmp_path, "a", {})) == {}
    assert len(run.eval_run_id) == 32


def test_a_hook_past_its_timeout_fails_and_one_within_it_does_not(tmp_path: Path) -> None:
    slow = "import time\ntime.sleep(1.5)\n"  # past 300 ms, well within 3 s: milliseconds, not tenths
    timed_out = run_hook(hook(tmp_path, slow, timeout_ms=300), None, "run", tmp_path)
    assert timed_out.failure is not None and "timed out" in timed_out.failure
    assert run_hook(hook(tmp_path, "import time\ntime.sleep(0.2)\n", timeout_ms=20_000), None, "run",
                    tmp_path).failure is None


def test_a_hook_runs_in_its_own_folder_else_the_workspace_and_is_given_the_case(tmp_path: Path) -> None:
    code = ("import json, os, sys\np = json.load(sys.stdin)\n"
            "print(os.getcwd(), p['test_id'], p['eval_run_id'], p['case_metadata'], p['workspace_path'])\n")
    own = hook(tmp_path, code)
    (tmp_path / "ws").mkdir()
    case = make_case(tmp_path, "c1", {}).model_copy(update={"metadata": {"team": "geo"}})
    ran = run_hook(own, case, "run-9", tmp_path / "ws")
    assert ran.output == f"{tmp_path} c1 run-9 {{'team': 'geo'}} {tmp_path / 'ws'}"
    elsewhere = run_hook(own.model_copy(update={"cwd": None}), None, "run-9", tmp_path / "ws")
    assert elsewhere.output == f"{tmp_path / 'ws'} None run-9 None {tmp_path / 'ws'}"


def test_a_failing_after_each_is_a_warning_naming_the_case_and_its_output_is_the_row_s(tmp_path: Path) -> None:
    hooks = {"after_each": hook(tmp_path, "import sys\nprint('left a mess')\nsys.exit(5)\n", "after_each")}
    run = WorkspaceHooks()
    case = make_case(tmp_path, "c", hooks)
    assert run.before(case) == ({}, None)
    assert run.after(case) == {"after_each_output": "left a mess"}
    [warning] = run.warnings
    assert warning.startswith(f"{tmp_path / 's.eval.yaml'}:1: case 'c': after_each hook failed (")
    assert warning.endswith(": left a mess")


def test_before_each_runs_for_every_case_and_its_failure_is_the_case_s(tmp_path: Path) -> None:
    code = "import json, sys\nc = json.load(sys.stdin)['test_id']\nprint('prepared', c)\nsys.exit(c == 'bad')\n"
    hooks = {"before_each": hook(tmp_path, code)}
    run = WorkspaceHooks()
    good, bad = make_case(tmp_path, "good", hooks), make_case(tmp_path, "bad", hooks)
    assert run.before(good) == ({"before_each_output": "prepared good"}, None)
    run.after(good)
    outputs, why = run.before(bad)
    run.after(bad)
    assert outputs == {"before_each_output": "prepared bad"}
    assert why is not None and why.startswith("before_each hook failed (") and why.endswith(": prepared bad")


def test_a_secret_the_cut_would_fall_inside_is_hidden_whole(tmp_path: Path) -> None:
    """Hidden first, then cut: cut first, a key straddling the cut would keep its unrecognisable tail."""
    secret = "sk-hook-secret-123"
    forget_secrets()
    register_secrets([secret])
    try:
        code = f"import sys\nsys.stdout.write({secret!r} + 'y' * {OUTPUT_CHARS - 9})\n"
        ran = run_hook(hook(tmp_path, code), None, "run", tmp_path)
    finally:
        forget_secrets()
    assert ran.output == "***" + "y" * (OUTPUT_CHARS - 9)  # 3994 characters once hidden: nothing is cut
    assert secret[9:] not in ran.output
