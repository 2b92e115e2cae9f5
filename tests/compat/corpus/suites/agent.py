"""The agent under test: answers from its prompt, and says which files and folder it was given."""

import json
import os
import sys

prompt, files = sys.argv[1], sys.argv[2:]
if "refund" in prompt:
    # AgentV's cli output schema: the answer, the tool calls it made, and what the run cost.
    calls = [{"tool": "load", "input": {"id": 7}, "output": "order 7", "id": "t1", "duration_ms": 40},
             {"tool": "search", "input": {"query": "refunds", "limit": 3}, "id": "t2", "duration_ms": 900}]
    print(json.dumps({"text": "Refund issued for order 7.",
                      "output_messages": [{"role": "assistant", "content": "Looking it up.", "tool_calls": calls},
                                          {"role": "assistant", "content": "Refund issued for order 7."}],
                      "token_usage": {"input": 1000, "output": 200, "cached": 300},
                      "cost_usd": 0.02, "duration_ms": 1500}))
elif "capital of France" in prompt:
    print("Paris is the capital of France.")
elif prompt.startswith("Say the word"):
    print(prompt[len("Say the word"):].strip())
elif "files" in prompt:
    print("files: " + ", ".join(sorted(os.path.basename(f) for f in files)))
elif "JSON" in prompt:
    print(json.dumps({"city": "Paris", "country": "France"}))
elif "folder" in prompt:
    print("folder: " + os.path.basename(os.getcwd()))
else:
    print("I do not know.")
