"""A code judge written for AgentV: reads file segments by their `value`, as written in the eval file."""

import json
import sys

payload = json.load(sys.stdin)
values = [seg.get("value") for message in payload["input"] if isinstance(message.get("content"), list)
          for seg in message["content"] if isinstance(seg, dict) and seg.get("type") == "file"]
answer = payload["answer"]
checks = {
    "the file segment keeps its value": "./docs/context.md" in values,
    "the agent saw context.md": "context.md" in answer,
    "the agent saw style.instructions.md": "style.instructions.md" in answer,
}
print(json.dumps({
    "score": sum(checks.values()) / len(checks),
    "hits": [name for name, ok in checks.items() if ok],
    "misses": [name for name, ok in checks.items() if not ok],
    "reasoning": f"values={values}",
}))
