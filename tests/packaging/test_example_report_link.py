"""The example workflows keep report.html and link it from the job summary (issue: "a report people can look at").

report.html is written beside junit.xml in the output folder; each example uploads that folder and
then appends the artifact's URL to the job summary, so a reviewer opens the page in one click.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

WORKFLOWS = sorted((Path(__file__).resolve().parents[2] / "examples" / "workflows").glob("*.yml"))


def _steps_after_the_gate(workflow: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """The steps of each job that runs the gate (a step with `id: gate`)."""
    jobs = workflow["jobs"].values()
    return [job["steps"] for job in jobs if any(step.get("id") == "gate" for step in job.get("steps", []))]


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_the_html_report_is_kept_and_linked_from_the_summary(path: Path) -> None:
    workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
    gated = _steps_after_the_gate(workflow)
    assert gated, f"{path.name} runs no gate step"
    for steps in gated:
        gate = next(step for step in steps if step.get("id") == "gate")
        output_dir = str(gate.get("with", {}).get("output-dir", ".agentv-gate")).rstrip("/")
        keep = next((s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact@")
                     and str(s["with"]["path"]).rstrip("/") == output_dir), None)
        assert keep is not None, f"{path.name}: no step uploads {output_dir}/ (where report.html is written)"
        assert keep.get("id"), f"{path.name}: the upload step needs an id so its artifact-url can be linked"
        link = [s for s in steps if f"steps.{keep['id']}.outputs.artifact-url" in str(s.get("env", ""))
                and "GITHUB_STEP_SUMMARY" in str(s.get("run", ""))]
        assert link, f"{path.name}: nothing links the uploaded report.html from the job summary"
