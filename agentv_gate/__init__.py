"""agentv-gate: AgentV-compatible agent evals as a pull-request gate.

The version has one source, `[project] version` in pyproject.toml: an installed copy reads it from
its package metadata; a source checkout that was never installed reads pyproject.toml itself.
"""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path


def _version() -> str:
    try:
        return metadata.version("agentv-gate")
    except metadata.PackageNotFoundError:
        pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
        try:
            found = re.search(r'(?m)^version\s*=\s*"([^"]+)"', pyproject.read_text(encoding="utf-8"))
        except OSError:
            found = None
        return found.group(1) if found else "0+unknown"


__version__ = _version()
