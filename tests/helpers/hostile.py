"""Shared helpers for the hardening tests: a throwaway repository, the real CLI as a subprocess, report checks.

Everything goes through `python -m agentv_gate.cli` in a child process, exactly as CI runs it, so
signals, exit codes, stdout/stderr and files on disk are the real ones.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import xmlschema

from agentv_gate.report.junit import SCHEMA_PATH

PY = sys.executable
FIXTURES = Path(__file__).resolve().parents[1] / "hardening"
JUDGES = FIXTURES / "judges"
_SCHEMA: xmlschema.XMLSchema | None = None


def write(path: Path, text: str, executable: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    if executable:
        path.chmod(0o755)
    return path


def make_repo(root: Path, targets_yaml: str = "targets:\n  - name: default\n    provider: mock\n    response: ok\n") -> Path:
    """A repository root (`.git` marks it) with `.agentv/targets.yaml` and an empty `evals/`."""
    root.mkdir(parents=True, exist_ok=True)
    (root / ".git").mkdir(exist_ok=True)
    (root / "evals").mkdir(exist_ok=True)
    write(root / ".agentv" / "targets.yaml", targets_yaml)
    return root


def cli_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """Our environment minus anything that would make the child think it runs in GitHub Actions."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env.setdefault("PYTHONIOENCODING", "utf-8")
    env.update(extra or {})
    return env


def cli_argv(*args: str) -> list[str]:
    return [PY, "-m", "agentv_gate.cli", *args]


def run_cli(repo: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cli_argv(*args), cwd=repo, env=cli_env(env), capture_output=True, text=True,
                          encoding="utf-8", errors="replace", timeout=timeout, stdin=subprocess.DEVNULL)


def start_cli(repo: Path, *args: str, env: dict[str, str] | None = None,
              stdout: Any = subprocess.PIPE, stderr: Any = subprocess.PIPE) -> subprocess.Popen[str]:
    """The CLI in its own session, so a test can signal it (and only it) like a CI runner would."""
    return subprocess.Popen(cli_argv(*args), cwd=repo, env=cli_env(env), stdout=stdout, stderr=stderr,
                            stdin=subprocess.DEVNULL, text=True, encoding="utf-8", errors="replace",
                            start_new_session=True)


def wait_for(predicate: Any, timeout: float = 30.0, interval: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())


def pid_alive(pid: int) -> bool:
    """True while `pid` exists and is not a zombie (a zombie has run its course)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def kill_quietly(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def schema() -> xmlschema.XMLSchema:
    global _SCHEMA
    if _SCHEMA is None:
        _SCHEMA = xmlschema.XMLSchema(str(SCHEMA_PATH))
    return _SCHEMA


def checked_junit(path: Path) -> ET.Element:
    """Parse the JUnit file (well-formed) and validate it against the bundled Jenkins XSD."""
    root = ET.parse(path).getroot()
    schema().validate(str(path))
    return root


def junit_cases(root: ET.Element) -> dict[str, str]:
    """testcase name -> 'pass' | 'fail' | 'error'; a ` [target]` suffix (several targets in a run) dropped."""
    out: dict[str, str] = {}
    for tc in root.iter("testcase"):
        state = "error" if tc.find("error") is not None else "fail" if tc.find("failure") is not None else "pass"
        out[re.sub(r" \[[^\]]*\]$", "", tc.get("name") or "")] = state
    return out


_V2_COMMAND = re.compile(r"^::")


def runner_commands(log: str) -> list[str]:
    """Every line the GitHub runner would take for a workflow command (actions/runner ActionCommand).

    TryParseV2: after trimming leading whitespace, a line starting with `::`. TryParse (legacy):
    `##[` anywhere in the line. Lines end as .NET's StreamReader.ReadLine ends them: CR, LF or CRLF.
    """
    commands = []
    for line in re.split(r"\r\n|\r|\n", log):
        if _V2_COMMAND.match(line.lstrip()) or "##[" in line:
            commands.append(line)
    return commands


def parse_github_output(text: str) -> dict[str, str]:
    """`$GITHUB_OUTPUT` as the runner reads it: `k=v` lines and `k<<DELIM` heredocs; raises if malformed."""
    values: dict[str, str] = {}
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            body: list[str] = []
            i += 1
            while i < len(lines) and lines[i] != delimiter:
                body.append(lines[i])
                i += 1
            if i == len(lines):
                raise ValueError(f"heredoc for {name!r} never ends")
            values[name] = "\n".join(body)
        elif "=" in line:
            name, value = line.split("=", 1)
            values[name] = value
        else:
            raise ValueError(f"unparseable GITHUB_OUTPUT line: {line!r}")
        if not name:
            raise ValueError("empty output name")
        i += 1
    return values


def copy_judges(repo: Path) -> Path:
    """The fixture judges copied into the repository (scripts outside the repo root are refused)."""
    folder = repo / "evals" / "judges"
    folder.mkdir(parents=True, exist_ok=True)
    for judge in JUDGES.glob("*.py"):
        (folder / judge.name).write_text(judge.read_text(encoding="utf-8"), encoding="utf-8")
    return folder


def no_traceback(text: str) -> bool:
    return "Traceback (most recent call last)" not in text
