"""What `make compat` and the replayed expectations know to differ from AgentV 2.19, each with its reason.

`REFUSED`: suites AgentV runs offline that the gate refuses, naming a feature it does not run yet (a
suite is run whole or not at all). `DIFFERING`: suites whose cases differ for a reason not yet fixed or
deliberate. The replay test skips both, saying why; `make compat` lists them in its table.
"""

from __future__ import annotations

WORKSPACE_FILE = ("its shared workspace file (workspace: ../../workspace.yaml, read as AgentV reads it) holds a "
                  "workspace template, a pooled mode, git repositories and a hook's reset, which are not run yet "
                  "(AgentV copies the template into a pool slot; its answer here comes from an LLM target that "
                  "never sees the workspace)")

REFUSED = {
    "features/workspace-shared-config/evals/accuracy/dataset.eval.yaml": WORKSPACE_FILE,
    "features/workspace-shared-config/evals/regression/dataset.eval.yaml": WORKSPACE_FILE,
    "showcase/cross-repo-sync/evals/dataset.eval.yaml": "workspace templates (workspace.template) are not run yet",
}

DIFFERING: dict[str, str] = {}

DELIBERATE_JUNIT = ("a file whose cases run on several targets names each JUnit testcase `case [target]`; AgentV "
                    "repeats the bare case name, which CI tools merge")
