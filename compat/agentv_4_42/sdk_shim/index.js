// A stand-in for AgentV's `@agentv/sdk` (not on the npm registry here), written for the differential only:
// defineCodeGrader reads the grader payload on stdin, hands the handler its keys in camelCase, and prints
// what the handler returns as JSON; definePromptTemplate prints the returned prompt. Both AgentV 4.42.4 and
// agentv-gate run the example graders with this same module, so the comparison is of what each tool
// sends and how each reads the reply.
const camel = (key) => key.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
const deep = (value) =>
  Array.isArray(value)
    ? value.map(deep)
    : value && typeof value === 'object'
      ? Object.fromEntries(Object.entries(value).map(([k, v]) => [camel(k), deep(v)]))
      : value;

async function readInput() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return deep(JSON.parse(Buffer.concat(chunks).toString('utf8')));
}

export function defineCodeGrader(handler) {
  readInput()
    .then((input) => handler(input))
    .then((result) => {
      process.stdout.write(`${JSON.stringify(result)}\n`);
    })
    .catch((error) => {
      process.stderr.write(`grader failed: ${error?.stack ?? error}\n`);
      process.exit(1);
    });
  return handler;
}

export function definePromptTemplate(handler) {
  readInput()
    .then((input) => handler(input))
    .then((prompt) => {
      process.stdout.write(String(prompt));
    })
    .catch((error) => {
      process.stderr.write(`prompt template failed: ${error?.stack ?? error}\n`);
      process.exit(1);
    });
  return handler;
}

export const defineCodeJudge = defineCodeGrader;
export const defineAssertion = defineCodeGrader;
