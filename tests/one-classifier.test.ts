/**
 * One place maps a failing HTTP status to a code: src/transport/classify-status.ts. This scans every
 * source file under src/ and providers/ for a status compared with a 4xx or 5xx literal, a `case`
 * on one, or a 4xx/5xx key mapped to a code name, and fails on any outside that file, except the
 * few lines listed below with the reason they are not a provider failure's code.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { ATTEMPT_CODES, ENVELOPE_CODES, PROVIDER_ERROR_CODES } from "../src/protocol/codes.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CLASSIFIER = "src/transport/classify-status.ts";

const CODE_NAMES = [...new Set([...PROVIDER_ERROR_CODES, ...ATTEMPT_CODES, ...ENVELOPE_CODES])];
const FAILING_STATUS = "[45]\\d\\d";
const OPERATOR = "(?:===|!==|==|!=|>=|<=|>|<)";
/** A comparison with a failing status; `< 400` only says "not a failure" (a redirect's bound). */
const COMPARED =
  `(?:(?:===|!==|==|!=|>=|<=|>)\\s*${FAILING_STATUS}|<\\s*(?!400\\b)${FAILING_STATUS})`;

/** Each a way to say "this failing status means that": all today's copies took one of them. */
const PATTERNS: RegExp[] = [
  // `status === 429`, `res.status >= 500`, `refusal.status !== 408`
  new RegExp(`\\b\\w*status\\w*\\s*${COMPARED}\\b`, "i"),
  // `429 === status`
  new RegExp(`\\b${FAILING_STATUS}\\s*${OPERATOR}\\s*\\w*status`, "i"),
  // `case 404:`
  new RegExp(`\\bcase\\s+${FAILING_STATUS}\\s*:`),
  // `{ 401: "adapter_unavailable" }`
  new RegExp(`\\b${FAILING_STATUS}\\s*:\\s*["'\`](?:${CODE_NAMES.join("|")})["'\`]`),
];

/**
 * Lines that compare a failing status for another purpose, each with its reason. A new line in
 * these files is still caught.
 */
const ALLOWED: Record<string, string> = {
  // A page's server, not a provider: whether a fetch of it may be tried again (docs/envelope.md,
  // "Fetching a page"), with 425 Too Early among the retryable ones.
  "src/evidence/fetch-evidence.ts: const retryable = response.status >= 500 || RETRYABLE_STATUSES.has(response.status);":
    "a fetched page's retryability",
  // RFC 9309 section 2.3.1.3: a robots.txt answering 4xx means no rules, not a failure.
  "src/evidence/robots-check.ts: if (status >= 400 && status < 500) {": "robots.txt's 4xx",
  // OpenTelemetry's HTTP server span conventions: a 5xx answer sets `error.type`; a span attribute,
  // never an outcome's code.
  "src/observe/otel-tracing.ts: if (status >= 500) this.span.fail(String(status));":
    "a server span's error.type",
  // MCP Streamable HTTP: a 404 to a request carrying a session id means the session is gone, and
  // the client opens another; it is never a search's outcome.
  "src/transport/mcp-rpc.ts: if (answer.status === 404 && send.session?.id != null) {":
    "an MCP session the server forgot",
};

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : sources(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** `file: line` for every line that maps a failing status, outside the classifier. */
function statusMappings(files: Array<{ file: string; text: string }>): string[] {
  return files.flatMap(({ file, text }) =>
    file === CLASSIFIER ? [] : text.split("\n")
      .filter((line) => !/^\s*(?:\/\/|\*|\/\*)/.test(line))
      .filter((line) => PATTERNS.some((p) => p.test(line)))
      .map((line) => `${file}: ${line.trim()}`)
  );
}

describe("one classifier", () => {
  it("no file under src/ or providers/ but classify-status.ts maps a failing status to a code", () => {
    const files = ["src", "providers"].flatMap((dir) => sources(join(ROOT, dir))).map((path) => ({
      file: relative(ROOT, path).split("\\").join("/"),
      text: readFileSync(path, "utf8"),
    }));
    assert.ok(files.some((f) => f.file === CLASSIFIER), "the scan reaches the classifier");
    const found = statusMappings(files).filter((line) => !(line in ALLOWED));
    assert.deepEqual(found, [], `map these through ${CLASSIFIER} (failureFromStatus)`);
  });

  it("the scan finds the copies the classifier replaced", () => {
    // Lines as they stood in upstream.ts, exa.ts, github.ts and the example providers.
    const copies = [
      "    if (status === 429) {",
      "    if (status >= 400 && status < 500 && status !== 408) {",
      "  if (status === 403 || status === 429) {",
      "  refusal.status === 403",
      "      const retryable = status >= 500 || status === 408;",
      "    case 404:",
      '  const byStatus = { 401: "adapter_unavailable", 429: "rate_limited" };',
    ];
    const text = copies.join("\n");
    assert.deepEqual(
      statusMappings([{ file: "src/transport/upstream.ts", text }]).length,
      copies.length,
    );
    // The classifier itself, and what is not a failing status, stay quiet.
    assert.deepEqual(statusMappings([{ file: CLASSIFIER, text }]), []);
    const quiet = [
      "  if (response.status === 204 || response.status === 205) {",
      "    if (response.status >= 300 && response.status < 400) {",
      "  const cap = points.length < 400;",
      "  // status === 429 in a comment",
    ];
    assert.deepEqual(statusMappings([{ file: "src/x.ts", text: quiet.join("\n") }]), []);
  });
});
