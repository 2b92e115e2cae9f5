"""The agent under test: answers from its prompt, and says which files and folder it was given."""

import json
import os
import sys

prompt, files = sys.argv[1], sys.argv[2:]
if "capital of France" in prompt:
    print("Paris is the capital of France.")
elif prompt.startswith("Say the word"):
    print(prompt[len("Say the word"):].strip())
elif "files" in prompt:
    print("files: " + ", ".join(sorted(os.path.basename(f) for f in files)))
elif "JSON" in prompt:
    print(json.dumps({"city": "Paris", "country": "France"}))
elif "folder" in prompt:
    print("folder: " + os.path.basename(os.getcwd()))
else:
    print("I do not know.")
