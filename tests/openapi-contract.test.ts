/**
 * The API's own description agrees with every answer: each request of the contract table
 * (tests/support/contract-cases.ts) goes through Stoplight Prism in proxy mode in front of the
 * gateways, and Prism's findings on the answer's side (status, headers, body against
 * /openapi.json) fail the test; each body is also checked against the document's schema for its
 * status and media type (to name the JSON path) and against the JSON Schemas under /schemas that
 * apply to it (an envelope's, a fetched page's evidence), and each streamed event against the
 * schema the document gives its items. A route of the route table that the document or the table
 * leaves out fails, named; so does Redocly's lint of the document, past the rules redocly.yaml
 * turns off with their reasons.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { isDeepStrictEqual } from "node:util";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { ROUTES } from "../src/http/route-table.ts";
import { CODES } from "../src/envelope/code-table.ts";
import { SCHEMA_NAMES } from "../src/protocol/schema-names.ts";
import {
  ANY_ROUTE,
  CASES,
  type ContractCase,
  UNREACHED,
  UNROUTED,
} from "./support/contract-cases.ts";
import {
  GATEWAY_HEADER,
  type Gateways,
  REPLAY_HEADER,
  startGateways,
} from "./support/contract-gateways.ts";
import { type Prism, prismLines, startPrism, violationsOf } from "./support/contract-prism.ts";
import { rawRequest } from "./support/contract-case.ts";
import { exchange } from "./support/raw-http.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const DOC_ID = "https://tracefetch.test/openapi.json";
/** Bounds a raw case's wait: a stalled body's 408 comes after the full gateway's 1 s deadline. */
const RAW_ANSWER_MS = 5_000;
/**
 * Bounds one exchange with Prism or the gateway: the slowest case (a page fetch's own 10 s
 * timeout) answers well within it, so a case past it failed, and says so by name.
 */
const ANSWER_MS = 30_000;
/**
 * Bounds a route's cases together (each `it`): about 5 s on an idle machine, 40 s on a loaded one
 * (/v1/search). Set on each `it`, not on its `describe`: Deno's node:test ignores a suite's timeout.
 */
const ROUTE_MS = 180_000;
/** Bounds Redocly's lint, a child process: about 2 s here. */
const LINT_MS = 60_000;

// deno-lint-ignore no-explicit-any
type Json = any;

let gateways: Gateways;
let prism: Prism;
let dir: string;
let doc: Json;
// verbose: each finding carries the value it is about, for its message.
const ajv = new Ajv2020({ allErrors: true, strict: false, verbose: true });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);

before(async () => {
  gateways = await startGateways();
  const text = await (await fetch(`${gateways.url}/openapi.json`, bounded())).text();
  doc = JSON.parse(text);
  dir = await mkdtemp(join(tmpdir(), "tracefetch-openapi-"));
  await writeFile(join(dir, "openapi.json"), text);
  ajv.addSchema({ ...doc, $id: DOC_ID });
  for (const name of SCHEMA_NAMES) {
    const schema = await (await fetch(`${gateways.url}/schemas/${name}.json`, bounded())).json();
    ajv.addSchema(schema, `/schemas/${name}.json`);
  }
  prism = await startPrism(join(dir, "openapi.json"), gateways.url);
});

after(async () => {
  await prism?.close();
  await gateways?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A fetch's bound: past ANSWER_MS it rejects with a TimeoutError. */
const bounded = () => ({ signal: AbortSignal.timeout(ANSWER_MS) });

const escape = (key: string) => key.replaceAll("~", "~0").replaceAll("/", "~1");
const jsonPath = (pointer: string) => `$${pointer.replaceAll("/", ".")}`;

/** The problems ajv finds in `value` against the schema at `ref`, each as `path: message`. */
function check(ref: string, value: unknown, at = ""): string[] {
  const validate = ajv.getSchema(ref);
  if (validate === undefined) return [`${ref}: no such schema`];
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => {
    // The field itself, when the finding is about one: extra, or missing.
    const field = e.params.additionalProperty ?? e.params.missingProperty;
    const path = jsonPath(`${at}${e.instancePath}${field === undefined ? "" : `/${field}`}`);
    const what = e.keyword === "additionalProperties"
      ? "answered, and not in the document"
      : e.keyword === "required"
      ? "required by the document, not answered"
      : e.keyword === "enum"
      ? `answered ${JSON.stringify(e.data)}, the document allows ${
        JSON.stringify(e.params.allowedValues)
      }`
      : `${e.message}, answered ${JSON.stringify(e.data)?.slice(0, 80)}`;
    return `${path}: ${what} (${ref.replace(DOC_ID, "/openapi.json")})`;
  });
}

/**
 * The problems of an envelope whose result the document names (`envelopeOf`): the result against
 * its own schema, for precise paths; the rest against `envelope` without the result when the
 * result failed, as the envelope's `result` is any one of every result, and each would fail.
 */
function checkEnvelope(envelope: string, result: string | null, body: Json): string[] {
  const own = result === null || body?.result === undefined
    ? []
    : check(`${DOC_ID}${result}`, body.result, "/result");
  const { result: _, ...header } = body ?? {};
  return [...own, ...check(envelope, own.length > 0 ? header : body)];
}

/**
 * /schemas/evidence.json describes a fetched page's evidence, which the document's FetchResult
 * carries: in a fetch's envelope and in each page event of a crawl. Its problems, at `at`.
 */
function evidenceProblems(fetchResult: Json, at: string): string[] {
  if (fetchResult?.evidence === undefined) return [];
  return check("/schemas/evidence.json", fetchResult.evidence, `${at}/evidence`);
}
const FETCH_RESULT = "#/components/schemas/FetchResult";
const CRAWL_EVENT = "#/components/schemas/CrawlEvent";

/** Sends a case through Prism: its answer, body and Prism's findings. */
async function send(c: ContractCase) {
  const token = c.token === undefined ? null : await gateways.token(c.token);
  if (c.raw !== undefined) {
    const answer = await exchange(gateways.port, rawRequest(c, token), RAW_ANSWER_MS);
    assert.ok(answer, `${c.method} ${c.path.slice(0, 80)}: no answer on the socket`);
    const key = crypto.randomUUID();
    const kept = Object.entries(answer.headers).filter(([name]) =>
      !["content-length", "connection", "transfer-encoding", "keep-alive"].includes(name)
    );
    gateways.store(key, new Response(answer.body, { status: answer.status, headers: kept }));
    // The same operation, asked with a request Prism can carry (no query, an empty JSON body: its
    // findings about this request are not the case's); the gateway's answer comes back.
    const res = await fetch(`${prism.url}${c.path.split("?")[0]}`, {
      ...bounded(),
      method: c.method,
      headers: { [REPLAY_HEADER]: key, "content-type": "application/json" },
      ...(c.method === "GET" || c.method === "HEAD" ? {} : { body: "{}" }),
    });
    return { res, text: await res.text() };
  }
  const headers: Record<string, string> = {
    [GATEWAY_HEADER]: c.gateway ?? "default",
    ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    ...(c.json === undefined ? {} : { "content-type": "application/json" }),
    ...c.headers,
  };
  const body = c.json === undefined ? c.body : JSON.stringify(c.json);
  const res = await fetch(`${prism.url}${c.path}`, {
    ...bounded(),
    method: c.method,
    headers,
    ...(body === undefined ? {} : { body: body as BodyInit }),
  });
  return { res, text: await res.text() };
}

/** Streamed events: NDJSON lines, or each SSE event's data. */
function eventsOf(media: string, text: string): unknown[] {
  if (media === "application/x-ndjson") {
    return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
  }
  return text.split("\n").filter((l) => l.startsWith("data:")).map((l) => JSON.parse(l.slice(5)));
}

/**
 * HEAD, asked of the gateway straight: Prism 5.14 reads a HEAD answer's body as JSON when its
 * type says JSON, and fails on the empty body. Its status must be one the document gives HEAD,
 * with no body; GET's answers, checked by Prism, carry the same headers.
 */
async function headProblems(route: string, c: ContractCase): Promise<string[]> {
  const token = c.token === undefined ? null : await gateways.token(c.token);
  const res = await fetch(`${gateways.url}${c.path}`, {
    ...bounded(),
    method: "HEAD",
    headers: {
      [GATEWAY_HEADER]: c.gateway ?? "default",
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    },
  });
  const label = `HEAD ${route} ${res.status} [${c.gateway ?? "default"}: ${c.name}]`;
  const out: string[] = [];
  if (res.status !== c.status) out.push(`${label} status: expected ${c.status}`);
  const documented = doc.paths[route]?.head?.responses[String(res.status)];
  if (documented === undefined) out.push(`${label} status: not documented`);
  for (const [name, header] of Object.entries(documented?.headers ?? {}) as Array<[string, Json]>) {
    const required = header.required ??
      doc.components.headers[header.$ref?.split("/").at(-1)]?.required;
    if (required === true && !res.headers.has(name)) out.push(`${label} ${name}: a header missing`);
  }
  if ((await res.text()) !== "") out.push(`${label} $: a body`);
  return out;
}

/**
 * Every problem with one case's answer, each naming method, route, status and where; an answer
 * that does not come (or does not end) within ANSWER_MS is one, named as the case.
 */
async function problemsOf(route: string | null, c: ContractCase): Promise<string[]> {
  try {
    if (c.method === "HEAD" && route !== null) return await headProblems(route, c);
    // The same finding from two checks is said once.
    return [...new Set(await answerProblems(route, c))];
  } catch (error) {
    if ((error as Error).name !== "TimeoutError") throw error;
    return [
      `${c.method} ${route ?? c.path} [${
        c.gateway ?? "default"
      }: ${c.name}]: no answer in ${ANSWER_MS} ms`,
    ];
  }
}

async function answerProblems(route: string | null, c: ContractCase): Promise<string[]> {
  const { res, text } = await send(c);
  const label = `${c.method} ${route ?? c.path} ${res.status} [${
    c.gateway ?? "default"
  }: ${c.name}]`;
  const out: string[] = [];
  const say = (what: string) => out.push(`${label} ${what}`);
  if (res.status !== c.status) say(`status: expected ${c.status}`);
  let unrouted = false;
  const found = violationsOf(res.headers).filter((v) => {
    if (v.message === "Selected route not found" && (route === null || res.status === 405)) {
      unrouted = true;
      return false;
    }
    return !(v.location[0] === "request" && (c.outside || c.raw));
  });
  for (const line of prismLines(found)) say(line);
  const media = (res.headers.get("content-type") ?? "").split(";")[0]?.trim() ?? "";
  const isJson = media === "application/json";
  const body = isJson && text !== "" ? JSON.parse(text) : null;
  if (c.type !== undefined && media !== c.type) {
    say(`content-type: expected ${c.type}, got ${media}`);
  }
  const code = c.code ?? (c.status === 405 ? "method_not_allowed" : undefined);
  for (const [path, want] of Object.entries(c.shows ?? {})) {
    const got = path.split(".").reduce((at: Json, key) => at?.[key], body);
    if (!isDeepStrictEqual(got, want)) {
      say(`$.${path}: expected ${JSON.stringify(want)}, got ${JSON.stringify(got)}`);
    }
  }
  if (code !== undefined && body?.code !== code) say(`$.code: expected ${code}, got ${body?.code}`);
  if (c.method === "HEAD") return out;
  const op = route === null || unrouted ? undefined : doc.paths[route]?.[c.method.toLowerCase()];
  const answer = op?.responses[String(res.status)] ?? op?.responses.default;
  if (op !== undefined && answer === undefined) say("status: not documented");
  if (answer !== undefined && text !== "") {
    const content = answer.content?.[media];
    if (content === undefined) say(`content-type: ${media} is not documented`);
    else {
      const at = `${DOC_ID}#/paths/${escape(route as string)}/${c.method.toLowerCase()}` +
        `/responses/${res.status in op.responses ? res.status : "default"}/content/${
          escape(media)
        }`;
      const envelope = JSON.stringify(content.schema).includes("#/components/schemas/Envelope");
      const result: string | null = content.schema?.allOf?.[1]?.properties?.result?.$ref ?? null;
      if (body !== null) {
        const found = envelope
          ? checkEnvelope(`${at}/schema`, result, body)
          : check(`${at}/schema`, body);
        out.push(...found.map((p) => `${label} ${p}`));
      }
      if (body !== null && envelope) {
        out.push(
          ...check("/schemas/envelope.json", body).map((p) => `${label} ${p}`),
        );
        if (result === FETCH_RESULT) {
          out.push(...evidenceProblems(body.result, "/result").map((p) => `${label} ${p}`));
        }
      }
      if (content["x-item-schema"] !== undefined) {
        const events = eventsOf(media, text);
        if (events.length === 0) say("$: a stream with no event");
        for (const event of events) {
          const found = check(`${at}/x-item-schema`, event);
          if (content["x-item-schema"].$ref === CRAWL_EVENT && (event as Json)?.event === "page") {
            found.push(...evidenceProblems((event as Json).result, "/result"));
          }
          out.push(...found.map((p) => `${label} event ${p}`));
        }
      }
    }
  }
  // No operation (no route, or a method it does not allow): an envelope, as the document says,
  // and as /schemas/envelope.json says.
  if (body !== null && op === undefined) {
    for (const ref of [`${DOC_ID}#/components/schemas/Envelope`, "/schemas/envelope.json"]) {
      out.push(...check(ref, body).map((p) => `${label} ${p}`));
    }
  }
  // A served JSON Schema is one.
  if (route === "/schemas/{name}.json" && res.status === 200) {
    try {
      ajv.compile({ ...body, $id: `https://tracefetch.test${c.path}` });
    } catch (error) {
      say(`$: not a JSON Schema: ${(error as Error).message}`);
    }
  }
  return out;
}

describe(
  "every answer agrees with /openapi.json (Prism proxy) and /schemas",
  () => {
    for (const route of ROUTES) {
      it(`${route.path}: every case of the table`, { timeout: ROUTE_MS }, async () => {
        const problems: string[] = [];
        for (const c of CASES[route.path] ?? []) {
          const done = await c.before?.(gateways.world);
          try {
            problems.push(...await problemsOf(route.path, c));
          } finally {
            if (typeof done === "function") await done();
          }
        }
        assert.deepEqual(problems, []);
      });
    }

    it("no route: 404, and what the listener refuses before any route", {
      timeout: ROUTE_MS,
    }, async () => {
      const problems: string[] = [];
      for (const c of UNROUTED) problems.push(...await problemsOf(null, c));
      assert.deepEqual(problems, []);
    });
  },
);

describe("the table and the document cover every route", () => {
  it("each route, method, documented status and envelope code has a case", () => {
    const missing: string[] = [];
    const all = [...Object.values(CASES).flat(), ...UNROUTED];
    for (const route of ROUTES) {
      const item = doc.paths[route.path];
      if (item === undefined) {
        missing.push(
          `${route.path}: in src/http/route-table.ts, not in /openapi.json (scripts/openapi-operations.ts)`,
        );
      }
      const cases = CASES[route.path];
      if (cases === undefined) {
        missing.push(`${route.path}: in src/http/route-table.ts, no cases in contract-cases.ts`);
        continue;
      }
      const allowed = route.allow.split(", ");
      for (const method of allowed) {
        if (!cases.some((c) => c.method === method)) {
          missing.push(`${method} ${route.path}: no case`);
        }
      }
      if (!cases.some((c) => !allowed.includes(c.method))) {
        missing.push(`${route.path}: no case of a method it does not allow (405)`);
      }
      for (const [method, op] of Object.entries(item ?? {}) as Array<[string, Json]>) {
        if (method === "head") continue;
        for (const [status, answer] of Object.entries(op.responses) as Array<[string, Json]>) {
          const reached = cases.some((c) =>
            c.method === method.toUpperCase() && String(c.status) === status
          );
          const codes = [...(answer.description as string).matchAll(/`(\w+)`/g)].map((m) => m[1]);
          const elsewhere = codes.length > 0 &&
            codes.every((code) => code! in UNREACHED || code! in ANY_ROUTE);
          if (!reached && !elsewhere) {
            missing.push(`${method.toUpperCase()} ${route.path} ${status}: documented, no case`);
          }
        }
      }
    }
    for (const path of Object.keys(CASES)) {
      if (!ROUTES.some((r) => r.path === path)) missing.push(`${path}: cases for no route`);
    }
    const shown = new Set(all.map((c) => c.code ?? (c.status === 405 ? "method_not_allowed" : "")));
    for (const [code, row] of Object.entries(CODES)) {
      if (row.http !== 0 && !shown.has(code as never) && !(code in UNREACHED)) {
        missing.push(`${code}: an envelope code (HTTP ${row.http}) no case shows`);
      }
    }
    assert.deepEqual(missing, []);
  });

  it("every component of the document is referenced", () => {
    const text = JSON.stringify(doc);
    const unused = Object.keys(doc.components.schemas).filter((name) =>
      !text.includes(`"#/components/schemas/${name}"`)
    );
    assert.deepEqual(unused, []);
  });
});

describe("redocly lint /openapi.json (redocly.yaml)", () => {
  it("0 errors and 0 warnings, offline", { timeout: LINT_MS }, async () => {
    const child = spawn(
      join(ROOT, "node_modules/.bin/redocly"),
      ["lint", join(dir, "openapi.json"), "--config", join(ROOT, "redocly.yaml"), "--format=json"],
      {
        cwd: ROOT,
        env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
        stdio: ["ignore", "pipe", "pipe"],
        // Killed at the test's bound, so a stuck lint leaves no process behind.
        signal: AbortSignal.timeout(LINT_MS),
      },
    );
    child.once("error", () => {});
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => out += chunk.toString());
    await new Promise((resolve) => child.once("close", resolve));
    const report = JSON.parse(out.slice(out.indexOf("{")));
    const problems = (report.problems as Json[]).map((p) =>
      `${p.severity} ${p.ruleId} at ${p.location?.[0]?.pointer}: ${p.message}`
    );
    assert.deepEqual(problems, []);
    assert.deepEqual(report.totals, { errors: 0, warnings: 0, ignored: 0 });
  });
});
