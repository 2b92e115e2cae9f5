"""One version, a changelog that names it, pins that point at it, and a distribution that installs and runs.

The sdist and wheel are built once for this module, without network (`python -m build
--no-isolation`, with the setuptools the dev extras install), from a copy of the package so the
working tree gets no build/ or egg-info/. The wheel then goes into a fresh virtualenv with
`--no-deps`; the test venv's site-packages is appended to that venv's path only to lend it the
runtime dependencies (a path line in a .pth file: the editable install's own .pth hooks there are
never run, so `agentv_gate` can only come from the wheel, which the test checks).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from agentv_gate import __version__

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
PIN = re.compile(r"^(v\d+\.\d+\.\d+|[0-9a-f]{40})$")


def pyproject_version() -> str:
    found = re.search(r'(?m)^version\s*=\s*"([^"]+)"', (ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert found, "pyproject.toml has no [project] version"
    return found.group(1)


def test_the_version_has_one_source() -> None:
    assert __version__ == pyproject_version()
    assert not re.search(r"__version__\s*=\s*['\"]", (ROOT / "agentv_gate" / "__init__.py").read_text())
    proc = subprocess.run([sys.executable, "-m", "agentv_gate", "--version"], capture_output=True, text=True,
                          timeout=60)
    assert proc.stdout.strip() == f"agentv-gate {pyproject_version()}"


def test_the_changelog_has_a_section_for_the_version() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"(?m)^## \[{re.escape(__version__)}\]", changelog), f"CHANGELOG.md: no '## [{__version__}]'"


def test_install_instructions_pin_the_released_version() -> None:
    """Every `your-org/agentv-gate@REF`, `git+...@REF` and pre-commit `rev:` names this version's tag (or a sha)."""
    texts = {path: path.read_text(encoding="utf-8")
             for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
                          *sorted((ROOT / "examples" / "workflows").glob("*.yml"))]}
    pins = [(path.name, ref) for path, text in texts.items()
            for ref in re.findall(r"agentv-gate(?:\.git)?@([^\s\"'`]+)|^\s*rev:\s*(\S+)", text, re.MULTILINE)]
    refs = [(name, a or b) for name, (a, b) in pins]
    assert refs, "no pinned reference found"
    for name, ref in refs:
        assert PIN.match(ref), f"{name}: '{ref}' is neither a release tag nor a commit sha"
        if ref.startswith("v"):
            assert ref == f"v{__version__}", f"{name}: pins {ref}, the version is {__version__}"


# ----------------------------------------------------------------------- the built distribution


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md", "CHANGELOG.md"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(ROOT / "agentv_gate", source / "agentv_gate", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(source)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out


def test_sdist_and_wheel_pass_twine_check(dist: Path) -> None:
    built = sorted(p.name for p in dist.iterdir())
    assert built == [f"agentv_gate-{__version__}-py3-none-any.whl", f"agentv_gate-{__version__}.tar.gz"]
    proc = subprocess.run([str(VENV_BIN / "twine"), "check", "--strict", *map(str, sorted(dist.iterdir()))],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    names = zipfile.ZipFile(next(dist.glob("*.whl"))).namelist()
    assert {"agentv_gate/report/junit.xsd", "agentv_gate/py.typed", "agentv_gate/report/html.py"} <= set(names)


def test_the_wheel_installs_into_a_fresh_venv_and_gates(dist: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "zz-test-venv-deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
                           "--no-index", str(next(dist.glob("*.whl")))], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr

    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PYTHON", "VIRTUAL_ENV"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"

    def gate(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(venv / "bin" / "agentv-gate"), *args], cwd=project, env=env,
                              capture_output=True, text=True, timeout=120)

    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    where = subprocess.run([str(python), "-c", "import agentv_gate; print(agentv_gate.__file__)"], cwd=project,
                           env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert Path(where).is_relative_to(venv), f"agentv_gate imported from {where}, not from the wheel"
    assert gate("--version").stdout.strip() == f"agentv-gate {__version__}"
    assert gate("init").returncode == 0
    proc = gate("run", "evals")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (project / ".agentv-gate" / "junit.xml").is_file() and (project / ".agentv-gate" / "report.html").is_file()
