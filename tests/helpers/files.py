"""Files and repositories for tests: one `write` and one `make_repo`, so every test builds them alike.

The loader refuses references outside the repository root and finds that root by its `.git`,
so a test repository is a folder with `.git` in it; `make_repo` also gives it the targets file
and `evals/` folder a real project has, so the CLI can run in it unchanged.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

MOCK_TARGETS = "targets:\n  - name: default\n    provider: mock\n    response: ok\n"
"""The targets file `make_repo` writes unless told otherwise: one mock target answering `ok`."""


def write(path: Path, text: str, executable: bool = False) -> Path:
    """Write `text` dedented (a leading newline dropped) as UTF-8, creating parent folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    if executable:
        path.chmod(0o755)
    return path


def make_repo(root: Path, targets_yaml: str = MOCK_TARGETS) -> Path:
    """A repository root (`.git` marks it) with `.agentv/targets.yaml` and an `evals/` folder.

    Safe to call on a folder that already exists; the targets file is (re)written.
    """
    root.mkdir(parents=True, exist_ok=True)
    (root / ".git").mkdir(exist_ok=True)
    (root / "evals").mkdir(exist_ok=True)
    write(root / ".agentv" / "targets.yaml", targets_yaml)
    return root
