"""Fails the case, echoing config.text (and the model's answer) in misses and reasoning."""
import json
import sys

payload = json.load(sys.stdin)
text = (payload.get("config") or {}).get("text", "")
answer = payload.get("answer") or ""
misses = [text] + ([answer[:2000]] if answer else [])
print(json.dumps({"score": 0.0, "misses": misses, "reasoning": text}, ensure_ascii=False))
