// Preloaded into AgentV by agentic_grader.py: pi-ai calls https://api.openai.com/v1 for an agentv target
// (its base URL is fixed); this sends those calls to the loopback fake model (FAKE_MODEL_URL, ending in /v1).
const orig = globalThis.fetch;
globalThis.fetch = (input, init) => {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  if (url.startsWith('https://api.openai.com/v1')) {
    const moved = process.env.FAKE_MODEL_URL + url.slice('https://api.openai.com/v1'.length);
    return orig(typeof input === 'string' || input instanceof URL ? moved : new Request(moved, input), init);
  }
  return orig(input, init);
};
