"""The small end-to-end project several CLI, action and hook tests run: a mock agent that knows one capital.

Against `PARIS_TARGETS`, `CAPITAL_SUITE` passes and a suite with `RIVER_CASE` appended fails, so a
test can produce a green or a red run without any model.
"""

from __future__ import annotations

PARIS_TARGETS = """\
targets:
  - name: default
    provider: mock
    response: "Paris is the capital of France."
"""

CAPITAL_SUITE = """\
tests:
  - id: capital
    input: What is the capital of France?
    assertions:
      - type: contains
        value: Paris
"""

RIVER_CASE = """\
  - id: river
    input: Which river flows through Paris?
    assertions:
      - type: contains
        value: Seine
"""
"""A case of CAPITAL_SUITE's list that the mock agent fails (it never names the Seine)."""


def geo_suite(river_value: str) -> str:
    """CAPITAL_SUITE with RIVER_CASE, its river case expecting `river_value` (`Paris` makes it pass)."""
    return CAPITAL_SUITE + RIVER_CASE.replace("value: Seine", f"value: {river_value}")
