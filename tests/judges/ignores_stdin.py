"""Fixture judge: never reads stdin, answers at once (the payload write gets EPIPE)."""
import json

print(json.dumps({"score": 0.75, "hits": ["did not need the payload"]}))
