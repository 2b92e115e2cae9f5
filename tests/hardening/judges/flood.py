"""Writes config.megabytes MB of text to stdout (then a valid verdict nobody should believe)."""
import json
import sys

config = json.load(sys.stdin).get("config") or {}
chunk = "x" * (1024 * 1024)
for _ in range(int(config.get("megabytes", 50))):
    sys.stdout.write(chunk)
sys.stdout.write('\n{"score": 1.0}\n')
