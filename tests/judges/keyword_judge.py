"""Fixture judge (stdlib only): scores the share of config keywords found in the answer.

It reports what it received in `reasoning` so tests can see the payload arrived intact.
"""

import json
import os
import sys

payload = json.load(sys.stdin)
answer = payload.get("answer") or payload.get("candidate_answer") or ""
keywords = (payload.get("config") or {}).get("keywords", [])
hits = [f"mentions {k}" for k in keywords if k in answer]
misses = [f"does not mention {k}" for k in keywords if k not in answer]
print(json.dumps({
    "score": len(hits) / len(keywords) if keywords else 1.0,
    "hits": hits,
    "misses": misses,
    "reasoning": json.dumps({"cwd": os.getcwd(), "question": payload.get("question"),
                             "criteria": payload.get("criteria"), "argv": sys.argv[1:]}),
}))
