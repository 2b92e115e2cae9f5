"""Fixture judge: answers on the wrong scale."""
import json

print(json.dumps({"score": 7, "hits": ["great"], "misses": [], "reasoning": "7 out of 10"}))
