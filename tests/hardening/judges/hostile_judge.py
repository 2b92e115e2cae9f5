"""Fails the case, echoing config.text and the model's answer in misses; reasoning is config.text
(plus the whole answer when config.echo_answer is set). It also logs config.text to stderr,
then exits 3 if config.crash is set."""
import json
import sys

payload = json.load(sys.stdin)
config = payload.get("config") or {}
text = config.get("text", "")
answer = payload.get("answer") or ""
misses = ([text] if text else []) + ([answer[:2000]] if answer else [])
reasoning = text + ("\n" + answer if config.get("echo_answer") else "")
sys.stderr.write(text + "\n")
if config.get("crash"):
    sys.exit(3)
print(json.dumps({"score": 0.0, "misses": misses, "reasoning": reasoning}, ensure_ascii=False))
