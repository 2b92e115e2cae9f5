#!/usr/bin/env node
// Code judge in JavaScript, no dependencies: `script: [node, examples/judges/keyword_judge.mjs]`.
import { readFileSync } from "node:fs";

try {
  const payload = JSON.parse(readFileSync(0, "utf8"));
  const answer = payload.answer ?? payload.candidate_answer ?? "";
  const keywords = payload.config?.keywords ?? [];
  if (keywords.length === 0) throw new Error("config.keywords is empty");
  const hits = keywords.filter((k) => answer.includes(k)).map((k) => `mentions ${k}`);
  const misses = keywords.filter((k) => !answer.includes(k)).map((k) => `does not mention ${k}`);
  console.log(JSON.stringify({ score: hits.length / keywords.length, hits, misses }));
} catch (error) {
  console.error(`keyword judge failed: ${error.message}`);
  process.exit(1);
}
