#!/usr/bin/env python3
"""Code judge with no dependencies at all: the raw AgentV contract, stdlib only.

Reads the JSON payload on stdin, prints {score, hits, misses, reasoning} on stdout. Works with
any Python 3, under agentv-gate and AgentV alike (it reads both `answer` and the older
`candidate_answer`). Exit non-zero on error so the runner reports the judge as broken.
"""

import json
import sys


def main() -> int:
    try:
        payload = json.load(sys.stdin)
        answer = payload.get("answer") or payload.get("candidate_answer") or ""
        keywords = (payload.get("config") or {}).get("keywords") or []
        if not keywords:
            raise ValueError("config.keywords is empty")
        hits = [f"mentions {k}" for k in keywords if k in answer]
        misses = [f"does not mention {k}" for k in keywords if k not in answer]
        print(json.dumps({"score": len(hits) / len(keywords), "hits": hits, "misses": misses,
                          "reasoning": f"{len(hits)}/{len(keywords)} keywords present"}))
        return 0
    except Exception as exc:  # report, never a bare traceback
        print(f"keyword judge failed: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
