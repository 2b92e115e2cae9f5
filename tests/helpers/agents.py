"""A scripted agent for end-to-end tests: a real `cli` target that answers each prompt from a table.

The table maps a key to a reply; the agent answers with the reply of the first key found in the
prompt, so one suite can hold cases whose agent reports metrics, tool calls, or nothing at all.
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
            command_template: "{sys.executable} {repo / 'agent.py'} {repo / 'replies.json'}"
    """)
