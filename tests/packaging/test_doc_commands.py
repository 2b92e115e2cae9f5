"""Every shell block of the docs that is meant to run runs, here, as written.

The blocks run in page order, in one bash process, in a scratch project laid out as the docs
assume a user's: the bundled examples as its `evals/`, `judges/` and `.agentv/` (where
`agentv-gate init` puts them), the repository's `examples/` beside them, and the results of a run
on main in `main-results.jsonl`. `agentv-gate` is this checkout (the test's virtualenv first on
PATH), and a `pip install` of agentv-gate is mapped to it: nothing is fetched. A block that cannot
run here says why in the docs' source, `<!-- not run: REASON -->` on the line above its fence.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.docs import ROOT, shell_blocks

BLOCKS = shell_blocks()
RUN = [block for block in BLOCKS if block.not_run is None]

PIP = r'''
pip() {  # agentv-gate is this checkout, installed in the test's virtualenv: nothing to fetch
  case "$*" in
    install*agentv-gate*) echo "agentv-gate: already installed from this checkout" ;;
    *) echo "pip $*: not mapped by tests/packaging/test_doc_commands.py" >&2; return 1 ;;
  esac
}
'''


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("docs-project")
    for part in (".agentv", "evals", "judges"):
        shutil.copytree(ROOT / "examples" / part, folder / part)
    shutil.copytree(ROOT / "examples", folder / "examples")
    base = run_cli("run", "evals", "--output-dir", "main", cwd=folder, env=_env(folder), timeout=120)
    assert base.returncode == 0, base.stdout + base.stderr
    shutil.copy(folder / "main" / "results.jsonl", folder / "main-results.jsonl")
    return folder


def _env(folder: Path) -> dict[str, str]:
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            "HOME": str(folder), "NO_COLOR": "1"}


def test_every_shell_block_the_docs_mean_to_run_runs(project: Path) -> None:
    script = ["set -e", PIP]
    for number, block in enumerate(RUN):
        script += [f"echo '--- block {number}' >&2", block.commands]
    done = subprocess.run(["bash", "-c", "\n".join(script)], cwd=project, env=_env(project),
                          capture_output=True, text=True, timeout=240)
    if done.returncode != 0:
        last = [line for line in done.stderr.splitlines() if line.startswith("--- block ")][-1]
        block = RUN[int(last.split()[-1])]
        pytest.fail(f"{block.where}: a block the docs mean to run exits {done.returncode} (mark it "
                    f"`<!-- not run: REASON -->` if it cannot run here):\n{block.commands}\n"
                    f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")


def test_a_block_not_run_here_says_why() -> None:
    assert RUN and all(block.not_run for block in BLOCKS if block not in RUN)
    unexplained = [block.where for block in BLOCKS if block.not_run is not None and len(block.not_run) < 8]
    assert not unexplained, f"`<!-- not run: ... -->` needs a reason a reader understands: {unexplained}"


def test_a_failing_block_fails_the_run_and_only_agentv_gate_installs_are_mapped(project: Path) -> None:
    """Guards the test above: the script stops at a failing command, and `pip` stands in for
    installing agentv-gate only (any other install fails rather than pass unrun)."""
    for commands in ("agentv-gate run no-such-folder\necho never\n", "pip install requests\necho never\n"):
        done = subprocess.run(["bash", "-c", "\n".join(["set -e", PIP, commands])], cwd=project,
                              env=_env(project), capture_output=True, text=True, timeout=60)
        assert done.returncode != 0 and "never" not in done.stdout, commands
    done = subprocess.run(["bash", "-c", "\n".join(["set -e", PIP, 'pip install "git+https://x/agentv-gate@v0"'])],
                          cwd=project, env=_env(project), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "already installed" in done.stdout
