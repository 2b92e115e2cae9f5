// Fixture judge in Node (no dependencies): the AgentV contract from JavaScript.
let raw = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { raw += chunk; });
process.stdin.on("end", () => {
  const payload = JSON.parse(raw);
  const answer = payload.answer ?? payload.candidate_answer ?? "";
  const keywords = (payload.config && payload.config.keywords) || [];
  const hits = keywords.filter((k) => answer.includes(k)).map((k) => `mentions ${k}`);
  const misses = keywords.filter((k) => !answer.includes(k)).map((k) => `does not mention ${k}`);
  const score = keywords.length ? hits.length / keywords.length : 1;
  const reasoning = `node saw ${payload.input.length} input messages`;
  console.log(JSON.stringify({ score, hits, misses, reasoning }));
});
