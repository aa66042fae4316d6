/**
 * Checks a provider endpoint against the provider protocol and prints the transcript.
 * `npm run conformance -- URL --name NAME --scope SCOPE [--query Q] [--timeout-ms N] [--json]`
 * Exit 0: every case passes; 1: some case fails; 2: usage error.
 */
import process from "node:process";
import { parseArgs } from "node:util";
import {
  DEFAULT_CONFORMANCE_QUERY,
  DEFAULT_CONFORMANCE_TIMEOUT_MS,
  formatTranscript,
  runConformance,
} from "../src/kit/mod.ts";
import { MAX_QUERY_CHARS, MAX_TIMEOUT_MS } from "../src/protocol/limits.ts";
import { NAME_PATTERN } from "../src/protocol/manifest-schema.ts";

const USAGE =
  `usage: npm run conformance -- URL --name NAME --scope SCOPE [--query Q] [--timeout-ms N] [--json]

Calls the provider at URL as the gateway would, once per conformance case, and prints each request,
answer, verdict and reason. NAME and SCOPE are what your manifest declares for it.
--query      a query that matches something, so limits are seen at work (default "${DEFAULT_CONFORMANCE_QUERY}")
--timeout-ms per request (default ${DEFAULT_CONFORMANCE_TIMEOUT_MS})
--json       print the report as JSON instead of the transcript
Exit status: 0 every case passes, 1 some case fails, 2 usage error.`;

function usage(problem: string): never {
  console.error(`${problem}\n\n${USAGE}`);
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: {
      name: { type: "string" },
      scope: { type: "string" },
      query: { type: "string" },
      "timeout-ms": { type: "string" },
      json: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
  });
} catch (error) {
  usage(error instanceof Error ? error.message : String(error));
}
const { values, positionals } = parsed;
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const [endpoint, ...rest] = positionals;
if (endpoint === undefined || rest.length > 0) usage("give exactly one provider URL");
if (!URL.canParse(endpoint) || !/^https?:$/.test(new URL(endpoint).protocol)) {
  usage(`not an http: or https: URL: ${endpoint}`);
}
const { name, scope, query } = values;
if (name === undefined || !NAME_PATTERN.test(name)) usage(`--name must match ${NAME_PATTERN}`);
if (scope === undefined || !NAME_PATTERN.test(scope)) usage(`--scope must match ${NAME_PATTERN}`);
if (query !== undefined && (query.trim() === "" || query.length > MAX_QUERY_CHARS)) {
  usage(`--query must be 1 to ${MAX_QUERY_CHARS} characters`);
}
const timeout = values["timeout-ms"];
const timeoutMs = timeout === undefined ? undefined : Number(timeout);
if (
  timeoutMs !== undefined &&
  (!/^\d+$/.test(timeout ?? "") || timeoutMs < 1 || timeoutMs > MAX_TIMEOUT_MS)
) {
  usage(`--timeout-ms must be an integer from 1 to ${MAX_TIMEOUT_MS}`);
}

const report = await runConformance(endpoint, {
  name,
  scope,
  ...(query === undefined ? {} : { query }),
  ...(timeoutMs === undefined ? {} : { timeoutMs }),
});
process.stdout.write(
  values.json ? `${JSON.stringify(report, null, 2)}\n` : formatTranscript(report),
);
process.exitCode = report.ok ? 0 : 1;
