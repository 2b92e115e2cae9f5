"""agentv-gate: AgentV-compatible agent evals as a pull-request gate.

The version has one source, `[project] version` in pyproject.toml: an installed copy reads it from
its package metadata; a source checkout that was never installed reads pyproject.toml itself. It
is looked up on first use of `__version__` (PEP 562), not on import: `importlib.metadata` costs
tens of milliseconds, and every judge that imports `agentv_gate.sdk` imports this package.
"""

from __future__ import annotations


def _version() -> str:
    import re
    from importlib import metadata
    from pathlib import Path

    try:
        return metadata.version("agentv-gate")
    except metadata.PackageNotFoundError:
        pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
        try:
            found = re.search(r'(?m)^version\s*=\s*"([^"]+)"', pyproject.read_text(encoding="utf-8"))
        except OSError:
            found = None
        return found.group(1) if found else "0+unknown"


def __getattr__(name: str) -> str:
    if name == "__version__":
        version = _version()
        globals()["__version__"] = version
        return version
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
