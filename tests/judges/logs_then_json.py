"""Fixture judge: prints a log line before its JSON result."""
import json
import sys

sys.stdin.read()
print("loading rubric...")
print(json.dumps({"score": 0.5, "misses": ["half right"]}))
