// Preloaded into AgentV by agentic_grader.py: pi-ai calls the public APIs for an agentv target (its base URLs
// are fixed); this sends those calls to the loopback fake model (FAKE_MODEL_URL, ending in /v1).
const orig = globalThis.fetch;
const moves = [['https://api.openai.com/v1', ''], ['https://api.anthropic.com', '/..']];
globalThis.fetch = (input, init) => {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  for (const [from, suffix] of moves) {
    if (url.startsWith(from)) {
      const base = suffix === '/..' ? process.env.FAKE_MODEL_URL.replace(/\/v1$/, '') : process.env.FAKE_MODEL_URL;
      const moved = base + url.slice(from.length);
      return orig(typeof input === 'string' || input instanceof URL ? moved : new Request(moved, input), init);
    }
  }
  return orig(input, init);
};
