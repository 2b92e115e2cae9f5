"""The reference under docs/ builds as a site with no warning, and its home page is the README's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.docs import ROOT, doc_pages


def test_every_page_under_docs_is_in_the_nav_and_the_site_builds_strictly(tmp_path: Path) -> None:
    listed = {path.name for path in doc_pages()[1:]}
    assert listed == {path.name for path in (ROOT / "docs").glob("*.md")}, "a page no one can reach, or a nav entry with no page"
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "pre-commit" / "index.html").is_file()


def test_the_site_home_page_is_the_readme_with_links_into_the_site() -> None:
    """docs/index.md is README.md with `docs/` links made site-relative: one text, two places."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8").replace("](docs/", "](")
    readme = readme.replace("The same pages build as a site with `mkdocs build` (`mkdocs.yml`; its theme needs\n"
                            "`mkdocs-material`: `pip install -e '.[docs]'`); `CHANGELOG.md` lists every release.",
                            "`CHANGELOG.md` in the repository lists every release.")
    assert (ROOT / "docs" / "index.md").read_text(encoding="utf-8") == readme


def test_the_docs_extra_installs_what_mkdocs_yml_needs() -> None:
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert "material" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert {d.split(">")[0] for d in extras["docs"]} == {"mkdocs", "mkdocs-material"}
    assert "pip install -e '.[docs]'" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_readme_is_a_landing_page() -> None:
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) < 300
