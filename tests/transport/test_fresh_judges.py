"""A judge runs as `python3 judge.py` run by hand: a fresh process, the same stdin, argv, environment,
folder and a hash seed of its own; and a pyenv-like shim first on PATH is resolved once per folder
and environment to the interpreter it would run, never to another one.

Both sides are real subprocesses: the judge through `run_judge` (what every code judge goes through),
and `python3 judge.py` started by hand with the same environment, stdin and folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentv_gate.transport import shims
from agentv_gate.transport.process import allow_new_scripts, judge_environment, run_judge
from tests.helpers.fake_pyenv import FakePyenv

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="shims are resolved where /proc is")

PROBE = """\
import json, os, sys
data = sys.stdin.read()
print(json.dumps({"stdin": data, "argv": sys.argv, "orig_argv": getattr(sys, "orig_argv", None),
                  "executable": sys.executable, "cwd": os.getcwd(), "env": dict(os.environ),
                  "hash": hash("a string whose hash depends on the seed"), "ppid_is_parent": os.getppid(),
                  "flags_hash_randomization": sys.flags.hash_randomization}))
"""
REAL_PYTHON = subprocess.run(["python3", "-c", "import sys; print(sys.executable)"], capture_output=True, text=True,
                             check=True).stdout.strip()
"""The interpreter the first `python3` on the tests' PATH runs (through a shim, if it is one)."""
PATH = os.environ["PATH"]
"""The tests' PATH as the session starts (a test sets its own for the gate's side)."""


@pytest.fixture(autouse=True)
def _fresh_state() -> None:
    allow_new_scripts()
    shims.forget()


def by_hand(folder: Path, stdin: str, path: str, extra: dict[str, str] | None = None) -> dict[str, object]:
    """`python3 judge.py` typed in `folder`, with the variables the gate adds for every judge."""
    env = {**os.environ, **judge_environment(), "PATH": path, **(extra or {})}
    done = subprocess.run(["python3", "judge.py"], input=stdin, capture_output=True, text=True, cwd=folder, env=env,
                          check=True)
    return dict(json.loads(done.stdout))


def through_gate(folder: Path, stdin: str, path: str, monkeypatch: pytest.MonkeyPatch,
                 extra: dict[str, str] | None = None) -> dict[str, object]:
    monkeypatch.setenv("PATH", path)
    for key, value in (extra or {}).items():
        monkeypatch.setenv(key, value)
    result = run_judge(["python3", "judge.py"], stdin, 30, cwd=folder)
    assert result.ok, (result.stderr, result.spawn_error)
    return dict(json.loads(result.stdout))


def same_but_seed(gate: dict[str, object], hand: dict[str, object]) -> None:
    """Everything the two saw is equal but the hash, which a fresh process draws anew each time."""
    for key in ("stdin", "argv", "orig_argv", "executable", "cwd", "flags_hash_randomization"):
        assert gate[key] == hand[key], key
    gate_env, hand_env = dict(gate["env"]), dict(hand["env"])  # type: ignore[call-overload]
    assert {k: (gate_env.get(k), hand_env.get(k)) for k in gate_env.keys() | hand_env.keys()
            if gate_env.get(k) != hand_env.get(k)} == {}
    assert gate["ppid_is_parent"] == os.getpid()  # started by the gate itself, not forked by a helper process


@pytest.fixture
def judge_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "judge.py").write_text(PROBE)
    return folder


def test_a_judge_sees_what_python3_judge_py_by_hand_sees(judge_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = f"{Path(REAL_PYTHON).parent}{os.pathsep}{PATH}"
    stdin = '{"answer": "Paris", "é": "ü"}'
    same_but_seed(through_gate(judge_folder, stdin, path, monkeypatch), by_hand(judge_folder, stdin, path))


def test_twelve_judges_draw_twelve_hash_seeds(judge_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Forked from warm interpreters, twelve judges saw four seeds: set-order flakiness went unseen."""
    path = f"{Path(REAL_PYTHON).parent}{os.pathsep}{PATH}"
    seen = {through_gate(judge_folder, "{}", path, monkeypatch)["hash"] for _ in range(12)}
    assert len(seen) == 12


def test_a_hash_seed_the_user_set_is_every_judges(judge_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = f"{Path(REAL_PYTHON).parent}{os.pathsep}{PATH}"
    hand = by_hand(judge_folder, "{}", path, {"PYTHONHASHSEED": "7"})
    gate = through_gate(judge_folder, "{}", path, monkeypatch, {"PYTHONHASHSEED": "7"})
    same_but_seed(gate, hand)
    assert gate["hash"] == hand["hash"]


# ---------------------------------------------------------------- a pyenv-like shim first on PATH


@pytest.fixture
def pyenv(tmp_path: Path) -> FakePyenv:
    tree = FakePyenv(tmp_path / "pyenv", REAL_PYTHON, versions=("3.99.1", "3.99.2", "3.99.3"), global_version="3.99.3")
    return tree


def shim_path(pyenv: FakePyenv) -> str:
    return f"{pyenv.shims}{os.pathsep}{PATH}"


def test_through_a_shim_a_judge_sees_what_it_sees_by_hand_and_the_shim_runs_once(
        judge_folder: Path, pyenv: FakePyenv, monkeypatch: pytest.MonkeyPatch) -> None:
    (judge_folder / ".python-version").write_text("3.99.1\n")
    hand = by_hand(judge_folder, "{}", shim_path(pyenv))
    assert hand["executable"] == str(pyenv.root / "versions" / "3.99.1" / "bin" / "python3")
    pyenv.calls.write_text("")
    gates = [through_gate(judge_folder, "{}", shim_path(pyenv), monkeypatch) for _ in range(5)]
    for gate in gates:
        same_but_seed(gate, hand)  # PATH with the version's bin first, PYENV_VERSION, PYENV_DIR: as the shim gives
    assert len(pyenv.runs()) == 1, pyenv.runs()
    assert len({gate["hash"] for gate in gates}) == 5


def test_each_folder_gets_the_version_its_own_files_choose(tmp_path: Path, pyenv: FakePyenv,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """.python-version up the tree, else the global version file; PYENV_VERSION beats both."""
    top = tmp_path / "repo"
    (top / "a" / "deep").mkdir(parents=True)
    (top / "b").mkdir()
    (top / "a" / ".python-version").write_text("3.99.1\n")
    (top / "b" / ".python-version").write_text("# a comment first is what pyenv skips\n3.99.2\n")
    for folder in (top / "a" / "deep", top / "b", top):
        (folder / "judge.py").write_text(PROBE)
    versions = pyenv.root / "versions"
    expected = {top / "a" / "deep": "3.99.1", top / "b": "3.99.2", top: "3.99.3"}
    for folder, version in expected.items():
        hand = by_hand(folder, "{}", shim_path(pyenv))
        gate = through_gate(folder, "{}", shim_path(pyenv), monkeypatch)
        same_but_seed(gate, hand)
        assert gate["executable"] == str(versions / version / "bin" / "python3"), folder
    gate = through_gate(top / "b", "{}", shim_path(pyenv), monkeypatch, {"PYENV_VERSION": "3.99.1"})
    assert gate["executable"] == str(versions / "3.99.1" / "bin" / "python3")


def test_a_version_file_written_mid_run_is_followed(judge_folder: Path, pyenv: FakePyenv,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    versions = pyenv.root / "versions"
    first = through_gate(judge_folder, "{}", shim_path(pyenv), monkeypatch)
    assert first["executable"] == str(versions / "3.99.3" / "bin" / "python3")
    (judge_folder / ".python-version").write_text("3.99.2\n")  # `pyenv local 3.99.2`
    second = through_gate(judge_folder, "{}", shim_path(pyenv), monkeypatch)
    assert second["executable"] == str(versions / "3.99.2" / "bin" / "python3")
    (pyenv.root / "version").write_text("3.99.1\n")  # not the deciding file here: nothing changes
    (judge_folder / ".python-version").unlink()
    third = through_gate(judge_folder, "{}", shim_path(pyenv), monkeypatch)
    assert third["executable"] == str(versions / "3.99.1" / "bin" / "python3")


def test_a_version_the_shim_cannot_run_fails_as_it_does_by_hand(judge_folder: Path, pyenv: FakePyenv,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    (judge_folder / ".python-version").write_text("3.1.0\n")  # not installed
    monkeypatch.setenv("PATH", shim_path(pyenv))
    result = run_judge(["python3", "judge.py"], "{}", 30, cwd=judge_folder)
    assert result.exit_code == 127 and "version `3.1.0' is not installed" in result.stderr


@pytest.mark.parametrize("argv", [["python3", "-m", "judge"], ["python3", "-u", "judge.py"]])
def test_a_command_with_interpreter_options_runs_the_shim_every_time(
        judge_folder: Path, pyenv: FakePyenv, monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> None:
    """`-m pip` makes pyenv run another program: options are not resolved, the shim runs as typed."""
    monkeypatch.setenv("PATH", shim_path(pyenv))
    for _ in range(3):
        assert run_judge(argv, "{}", 30, cwd=judge_folder).ok
    assert len(pyenv.runs()) == 3


def test_a_wrapper_that_is_not_a_known_shim_runs_every_time(judge_folder: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    wrappers = tmp_path / "wrappers"
    wrappers.mkdir()
    log = tmp_path / "wrapper.log"
    wrapper = wrappers / "python3"
    wrapper.write_text(f"#!/bin/sh\necho ran >> {log}\nexport CHOSEN_BY_WRAPPER=1\nexec {REAL_PYTHON} \"$@\"\n")
    wrapper.chmod(0o755)
    path = f"{wrappers}{os.pathsep}{PATH}"
    hand = by_hand(judge_folder, "{}", path)
    log.write_text("")
    for _ in range(3):
        same_but_seed(through_gate(judge_folder, "{}", path, monkeypatch), hand)
    assert len(log.read_text().splitlines()) == 3


STDIN_BY_NAME = """
import json, os, stat, sys
mode = os.fstat(0).st_mode
try:
    with open("/dev/stdin", encoding="utf-8") as named:
        by_name = named.read()
except OSError as exc:
    by_name = f"error {exc.errno}"
print(json.dumps({"socket": stat.S_ISSOCK(mode), "by_name": by_name}))
"""

STDIN_STREAM = """
import json, sys
print(json.dumps({"read": sys.stdin.read()}))
"""


def test_a_judge_gets_its_payload_on_a_socket_as_agentv_run_by_node_hands_it(tmp_path: Path) -> None:
    """AgentV installed with npm runs graders through node's child_process, whose stdin is a Unix socket:
    a grader opening `/dev/stdin` by name fails there (ENXIO, AgentV's own contract example), so it
    must not pass here; one reading its stdin stream reads every byte, however large."""
    import errno

    (tmp_path / "by_name.py").write_text(STDIN_BY_NAME, encoding="utf-8")
    (tmp_path / "stream.py").write_text(STDIN_STREAM, encoding="utf-8")
    named = run_judge(["python3", "by_name.py"], '{"answer": "Paris"}', 30, cwd=tmp_path)
    assert named.exit_code == 0, named.stderr
    assert json.loads(named.stdout) == {"socket": True, "by_name": f"error {errno.ENXIO}"}
    payload = json.dumps({"answer": "é" * 300_000})
    streamed = run_judge(["python3", "stream.py"], payload, 30, cwd=tmp_path)
    assert streamed.exit_code == 0, streamed.stderr
    assert json.loads(streamed.stdout) == {"read": payload}
