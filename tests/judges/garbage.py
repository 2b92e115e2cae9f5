"""Fixture judge: prints prose instead of JSON."""
import sys

sys.stdin.read()
print("I think the answer is pretty good, maybe 8/10?")
