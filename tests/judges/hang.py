"""Fixture judge: never answers."""
import time

time.sleep(600)
