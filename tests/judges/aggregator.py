"""Fixture composite aggregator: the minimum member score, naming the weakest member."""
import json
import sys

results = json.load(sys.stdin)["results"]
name, worst = min(results.items(), key=lambda item: item[1]["score"])
print(json.dumps({"score": worst["score"], "misses": [f"weakest: {name}"], "reasoning": "min of members"}))
