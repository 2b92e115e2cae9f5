"""Scores 1.0 when the answer contains config.expect (default: always)."""
import json
import sys

payload = json.load(sys.stdin)
expect = (payload.get("config") or {}).get("expect")
answer = payload.get("answer") or ""
score = 1.0 if expect is None or expect in answer else 0.0
print(json.dumps({"score": score, "hits": ["answered"] if score else [], "misses": [] if score else [f"no {expect}"]}))
