"""What `make compat` and the replayed expectations know to differ from AgentV 2.19, each with its reason.

`REFUSED`: suites AgentV runs offline that the gate refuses, naming a feature it does not run yet (a
suite is run whole or not at all). `DIFFERING`: suites whose cases differ for a reason not yet fixed or
deliberate. The replay test skips both, saying why; `make compat` lists them in its table.
"""

from __future__ import annotations

REFUSED: dict[str, str] = {}

DIFFERING: dict[str, str] = {}

DELIBERATE_JUNIT = ("a file whose cases run on several targets names each JUnit testcase `case [target]`; AgentV "
                    "repeats the bare case name, which CI tools merge")

ERROR_TEXT = ("an execution error's text: AgentV's miss is `Error: <message>` in its own words (`before_each script "
              "failed: Script failed: <stderr>`), the gate's says which hook failed how and where (`before_each hook "
              "failed (exited with code 1; file:line): <output>`); both quote the failing command's output, whose "
              "paths are the run's temporary folder. Score, verdict, error state and hits are compared")


def same_misses(agentv_error: bool, gate_error: bool, agentv: list[str], gate: list[str]) -> bool:
    """Misses compare word for word, except when both tools report an execution error (ERROR_TEXT)."""
    return (agentv_error and gate_error) or agentv == gate
