"""`agentv-gate init`: a starter suite that runs offline straight away, so a new user sees a green gate
before wiring a real agent. It never overwrites a file that exists."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import EXIT_OK

EVAL_FILE = """\
# An agentv-gate / AgentV eval suite. Run it: agentv-gate run evals
# It asks `default` (the mock of .agentv/targets.yaml) about Paris: once `default` is your real
# agent, retarget this file (`target:` a mock of yours) or delete it, beside your own suites.
description: Starter suite - replace the mock target with your agent in .agentv/targets.yaml
target: default
tests:
  - id: capital-of-france
    criteria: Names Paris as the capital of France
    input:
      - role: system
        content: Answer in one sentence.
      - role: user
        content: What is the capital of France?
    expected_output: Paris is the capital of France.
    assertions:
      - type: contains
        value: Paris
      - name: keywords
        type: code-grader
        command: [python3, judges/keywords.py]
        keywords: [Paris, France]
"""

JUDGE = '''\
#!/usr/bin/env python3
"""A code grader (AgentV 4.x): JSON on stdin (the answer's text in `output`), {score, assertions} on stdout."""
import json
import sys

payload = json.load(sys.stdin)
answer = payload.get("output") if isinstance(payload.get("output"), str) else ""
keywords = (payload.get("config") or {}).get("keywords", [])
assertions = [{"text": f"mentions {k}", "passed": k.lower() in answer.lower()} for k in keywords]
score = sum(a["passed"] for a in assertions) / len(assertions) if assertions else 1.0
print(json.dumps({"score": score, "assertions": assertions}))
'''

TARGETS = """\
# Targets: where answers come from. Secrets come from the environment as ${{ VAR }}.
targets:
  - name: default
    provider: mock
    response: Paris is the capital of France.
  # - name: default
  #   provider: openai
  #   base_url: https://api.openai.com/v1
  #   api_key: ${{ OPENAI_API_KEY }}
  #   model: gpt-4o-mini
"""


def execute(args: argparse.Namespace) -> int:
    root: Path = args.folder
    files = {
        root / "evals" / "starter.eval.yaml": (EVAL_FILE, False),
        root / "evals" / "judges" / "keywords.py": (JUDGE, True),
        root / ".agentv" / "targets.yaml": (TARGETS, False),
    }
    starter, targets = root / "evals" / "starter.eval.yaml", root / ".agentv" / "targets.yaml"
    own_targets = targets.exists() and not starter.exists()
    for path, (text, executable) in files.items():
        if path.exists():
            print(f"kept {path} (exists)", file=sys.stderr)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if executable:
            path.chmod(0o755)
        print(f"wrote {path}", file=sys.stderr)
    if own_targets:
        # The starter asks `default` about Paris: on a real agent it fails, and nothing else would say why.
        print(f"note: {starter} runs on `default` of your {targets}, not on a mock: retarget it (its "
              "`target:`) or delete it once your own suite exists", file=sys.stderr)
    print("next: agentv-gate validate evals && agentv-gate run evals", file=sys.stderr)
    return EXIT_OK
