"""Dies by its own SIGKILL halfway through writing a verdict."""
import os
import signal
import sys

sys.stdin.read()
sys.stdout.write('{"score": 1.0, "hi')
sys.stdout.flush()
os.kill(os.getpid(), signal.SIGKILL)
