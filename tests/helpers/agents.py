"""Agents for end-to-end tests, as real `cli` targets: a scripted one and an echo.

The scripted agent answers each prompt from a table: the reply of the first key found in the prompt,
so one suite can hold cases whose agent reports metrics, tool calls, or nothing at all. The echo
answers with its prompt, so a test can see what reached the agent.

The scripted agent runs as `python -S`: it needs only the standard library, and it starts once per
case, where the virtualenv's site setup (its editable-install finder) would be most of each start.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.helpers.files import make_repo, write

SCRIPTED_AGENT = """\
import json, sys
prompt = sys.stdin.read()
replies = json.load(open(sys.argv[1]))
reply = next(reply for key, reply in replies.items() if key in prompt)
print(json.dumps(reply) if isinstance(reply, dict) else reply)
"""
"""A reply that is a mapping is printed as JSON (`text`, `output_messages`, `token_usage`, `cost_usd`,
`duration_ms`, as a cli target reports them); a string is printed as the plain answer."""


def scripted_agent(repo: Path, replies: dict[str, Any]) -> Path:
    """Make `repo`'s default target the scripted agent answering from `replies` (agent.py and replies.json
    beside `.agentv/`); `repo` returned."""
    write(repo / "agent.py", SCRIPTED_AGENT)
    write(repo / "replies.json", json.dumps(replies))
    return make_repo(repo, f"""
        targets:
          - name: default
            provider: cli
            command_template: "{sys.executable} -S {repo / 'agent.py'} {repo / 'replies.json'}"
    """)


ECHO_TARGETS = """
targets:
  - name: default
    provider: cli
    command: "cat {PROMPT_FILE}"
    judge_target: judge
  - name: judge
    provider: mock
"""
"""A targets file whose agent answers with the prompt it was given, so a test sees what the prompt held."""
