"""Fixture judge: crashes with exit code 3 and a message on stderr."""
import sys

sys.stdin.read()
print("Traceback: judge exploded while scoring", file=sys.stderr)
sys.exit(3)
