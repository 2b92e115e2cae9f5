"""Pieces the workspace tests share: a cli agent run from the project by its full path, so it works in
whatever folder the workspace gives it, and a grader that reports which lines the case's file changes add."""

from __future__ import annotations

from pathlib import Path


def agent_targets(repo: Path) -> str:
    """A targets.yaml whose default target runs `repo/agent.py PROMPT OUTPUT_FILE` in the case's workspace:
    the agent answers through its output file, from what it finds where it runs."""
    return f"""\
targets:
  - name: default
    provider: cli
    command: python3 {repo}/agent.py {{PROMPT}} {{OUTPUT_FILE}}
"""


ADDED_LINES_GRADER = """\
import json, sys
changes = json.load(sys.stdin).get("file_changes") or ""
added = [line[1:] for line in changes.splitlines() if line.startswith("+") and not line.startswith("+++")]
print(json.dumps({"score": 1, "assertions": [{"text": "added: " + ",".join(added), "passed": True}]}))
"""
"""A code grader passing every case, whose one assertion lists the lines its file changes add: a test reads
in `added: ...` what the case's workspace diff held."""
