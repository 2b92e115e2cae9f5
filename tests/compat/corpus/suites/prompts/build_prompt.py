"""An executable prompt template (AgentV 2.19: `prompt: {command: [...]}`): payload in, prompt out."""

import json
import sys

payload = json.load(sys.stdin)
print(f"BUILT-BY-PROMPT-COMMAND\nQuestion: {payload['question']}\nAnswer: {payload['answer']}")
