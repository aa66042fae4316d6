/**
 * Writes schemas/openapi.json, the OpenAPI 3.1 document of every route, from the same valibot
 * schemas as schemas/*.json (the envelope, the search request, the stream events...), or with
 * --check reports it stale; scripts/gen-schemas.ts calls it. The routes come from the route table,
 * what each answers from scripts/openapi-operations.ts, and each refusal's status from the code
 * table, so a route, a method or a code added without its description stops the generation.
 */
import { readFile, writeFile } from "node:fs/promises";
import { toJsonSchemaDefs } from "@valibot/to-json-schema";
import type { GenericSchema } from "valibot";
import {
  AttemptRecordSchema,
  CandidateSchema,
  DecisionSchema,
  EnvelopeSchema,
  ExpandResultSchema,
  FetchRequestSchema,
  FetchResultSchema,
  GatewayDoctorResultSchema,
  IndexResultSchema,
  MergedEntrySchema,
  ProviderHealthSchema,
  ProvidersResultSchema,
  ProviderStateSchema,
  RefreshResultSchema,
  SearchRequestSchema,
  SearchResultSchema,
  StatusResultSchema,
  VerifyRequestSchema,
  VerifyResultSchema,
} from "../src/protocol/mod.ts";
import { ExpandAskSchema, RefreshAskSchema } from "../src/protocol/action-request-schema.ts";
import { StreamEventSchema } from "../src/protocol/stream-event-schema.ts";
import { CrawlEventSchema } from "../src/protocol/crawl-event-schema.ts";
import { CrawlRequestSchema } from "../src/protocol/crawl-request.ts";
import type { EnvelopeCode } from "../src/protocol/codes.ts";
import { CODES } from "../src/envelope/code-table.ts";
import { ROUTES } from "../src/http/route-table.ts";
import { JSON_SCHEMA_CONVERSION } from "./json-schema-conversion.ts";
import type { Fragment } from "./openapi-answers.ts";
import { OPERATIONS, type OperationSpec } from "./openapi-operations.ts";
import { searchParameters } from "./openapi-parameters.ts";
import { oasSpelling } from "./openapi-spelling.ts";

const FILE = new URL("../schemas/openapi.json", import.meta.url);

/** The schemas the document names, each once under components.schemas. */
const COMPONENTS: Record<string, GenericSchema> = {
  Envelope: EnvelopeSchema,
  SearchRequest: SearchRequestSchema,
  ExpandRequest: ExpandAskSchema,
  RefreshRequest: RefreshAskSchema,
  StreamEvent: StreamEventSchema,
  SearchResult: SearchResultSchema,
  Decision: DecisionSchema,
  AttemptRecord: AttemptRecordSchema,
  Candidate: CandidateSchema,
  MergedEntry: MergedEntrySchema,
  ProvidersResult: ProvidersResultSchema,
  StatusResult: StatusResultSchema,
  GatewayDoctorResult: GatewayDoctorResultSchema,
  ProviderState: ProviderStateSchema,
  ProviderHealth: ProviderHealthSchema,
  RefreshResult: RefreshResultSchema,
  ExpandResult: ExpandResultSchema,
  IndexResult: IndexResultSchema,
  FetchRequest: FetchRequestSchema,
  FetchResult: FetchResultSchema,
  VerifyRequest: VerifyRequestSchema,
  VerifyResult: VerifyResultSchema,
  CrawlRequest: CrawlRequestSchema,
  CrawlEvent: CrawlEventSchema,
};

const TAGS = [
  { name: "search", description: "One query, many providers, one fused list." },
  {
    name: "providers",
    description: "The providers: what you may search, their state and health, and what one holds.",
  },
  {
    name: "evidence",
    description: "A page fetched safely as evidence, a receipt the gateway signs, and its check.",
  },
  {
    name: "documents",
    description: "What describes the gateway: the index, schemas, keys and this document.",
  },
  { name: "mcp", description: "The same tools for a Model Context Protocol client." },
];

const ABOUT = "A federated search gateway for agents. Every JSON answer of `/v1/*`, refusals " +
  "included, is an envelope (`Envelope`): decide from its header (`ok`, `code`, `action`, " +
  "`retryable`), never from message text (docs/envelope.md). A method a route does not list " +
  "answers 405 with an `Allow` header, a path that is no route 404, a fault 500: envelopes too. " +
  "Any GET answered with JSON is indented with `?pretty=1`. A bearer token (a JWT) is optional " +
  "unless the gateway requires one; it lets a caller see the sensitive providers it grants.";

const HEADERS: Record<string, Fragment> = {
  RequestId: {
    description: "The caller's `x-request-id` when it matches `^[A-Za-z0-9._-]{1,64}$`, else a " +
      "generated UUID; the same as the envelope's `request_id`. Every envelope is sent with it.",
    required: true,
    schema: { type: "string" },
  },
  RetryAfter: {
    description: "Whole seconds to wait, rounded up, when the wait is known (`retry_after_ms`).",
    schema: { type: "integer", minimum: 0 },
  },
  WwwAuthenticate: {
    description: "The bearer challenge of RFC 6750: which kind of token problem it is.",
    schema: { type: "string" },
  },
  ServerTiming: {
    description: "One entry per attempt (`p_<provider>`, its latency and outcome), and fusion.",
    schema: { type: "string" },
  },
};

/** Statuses whose envelope may carry `retry_after_ms`, mirrored in Retry-After. */
const MAY_WAIT = new Set([429, 502, 503]);

/** The refusals grouped by the status the code table gives each, one response per status. */
function refusals(codes: readonly EnvelopeCode[]): Record<string, Fragment> {
  const byStatus = new Map<number, EnvelopeCode[]>();
  for (const code of new Set(codes)) {
    const status = CODES[code].http;
    if (status === 0) throw new Error(`${code} is the CLI's alone: no route answers it`);
    byStatus.set(status, [...byStatus.get(status) ?? [], code]);
  }
  const out: Record<string, Fragment> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    const headers: Fragment = { "x-request-id": { $ref: "#/components/headers/RequestId" } };
    if (
      list.some((c) => c === "unauthorized" || c.startsWith("token_") || c === "insufficient_scope")
    ) {
      headers["www-authenticate"] = { $ref: "#/components/headers/WwwAuthenticate" };
    }
    if (MAY_WAIT.has(status)) headers["retry-after"] = { $ref: "#/components/headers/RetryAfter" };
    out[String(status)] = {
      description: `An envelope with code ${list.map((c) => `\`${c}\``).join(", ")}.`,
      headers,
      content: { "application/json": { schema: { $ref: "#/components/schemas/Envelope" } } },
    };
  }
  return out;
}

function operation(method: string, spec: OperationSpec, path: string): Fragment {
  const parameters = [
    ...(path === "/v1/search" && method === "get" ? searchParameters() : []),
    ...(spec.parameters ?? []),
    // A refused method (spec.ok null) reads no parameter.
    ...(method === "get" && spec.ok !== null ? [{ $ref: "#/components/parameters/Pretty" }] : []),
    { $ref: "#/components/parameters/RequestId" },
  ];
  const envelopes = refusals(spec.refusals);
  const both = Object.keys(spec.other ?? {}).filter((status) => status in envelopes);
  if (both.length > 0) throw new Error(`${path}: ${both.join(", ")} is both an envelope and not`);
  return {
    tags: [spec.tag],
    summary: spec.summary,
    description: spec.description,
    operationId: spec.id,
    parameters,
    ...(spec.requestBody ? { requestBody: spec.requestBody } : {}),
    responses: { ...(spec.ok ? { "200": spec.ok } : {}), ...spec.other, ...envelopes },
  };
}

/** HEAD where the route allows it: each of GET's statuses and headers, without a body. */
function headOf(get: OperationSpec, getOperation: Fragment): Fragment {
  const responses: Record<string, Fragment> = {};
  for (const [status, answer] of Object.entries(getOperation.responses as Fragment)) {
    const { headers } = answer as Fragment;
    responses[status] = {
      description: `GET's ${status} status and headers, no body.`,
      ...(headers === undefined ? {} : { headers }),
    };
  }
  return {
    tags: [get.tag],
    summary: `${get.summary} (headers only)`,
    description: "The status and headers GET answers with, and no body.",
    operationId: `${get.id}Head`,
    parameters: getOperation.parameters,
    responses,
  };
}

function paths(): Fragment {
  for (const route of ROUTES) {
    const ops = OPERATIONS[route.path];
    if (ops === undefined) {
      throw new Error(`${route.path} is a route with no entry in openapi-operations.ts`);
    }
    for (const method of route.allow.split(", ")) {
      if (method !== "HEAD" && ops[method.toLowerCase() as "get"] === undefined) {
        throw new Error(
          `${route.path} allows ${method}, which openapi-operations.ts does not describe`,
        );
      }
    }
  }
  const out: Fragment = {};
  for (const [path, ops] of Object.entries(OPERATIONS)) {
    const item: Fragment = {};
    for (const [method, spec] of Object.entries(ops)) item[method] = operation(method, spec, path);
    const allowsHead = ROUTES.find((r) => r.path === path)?.allow.includes("HEAD") ?? false;
    if (ops.get && allowsHead) item.head = headOf(ops.get, item.get as Fragment);
    out[path] = item;
  }
  return out;
}

export function renderOpenApi(): string {
  const schemas = toJsonSchemaDefs(COMPONENTS, {
    ...JSON_SCHEMA_CONVERSION,
    overrideRef: ({ referenceId }) => `#/components/schemas/${referenceId}`,
  });
  const document = {
    openapi: "3.1.0",
    info: {
      title: "TraceFetch Edge",
      // The API's major, as `/v1` and the envelope's `version` say; GET / gives the build's.
      version: "1",
      description: ABOUT,
    },
    // Relative: the document is served by the gateway it describes, so `/` is that gateway.
    servers: [{ url: "/", description: "The gateway serving this document." }],
    tags: TAGS,
    security: [{}, { bearer: [] }],
    paths: paths(),
    components: {
      schemas,
      parameters: {
        Pretty: {
          name: "pretty",
          in: "query",
          required: false,
          description: "`1`: the JSON answer indented by two spaces; `0`, the default: compact.",
          schema: { enum: ["0", "1"], type: "string" },
        },
        RequestId: {
          name: "x-request-id",
          in: "header",
          required: false,
          description: "Adopted as the answer's `request_id` when it matches the pattern.",
          schema: { type: "string", pattern: "^[A-Za-z0-9._-]{1,64}$" },
        },
      },
      headers: HEADERS,
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT",
          description: 'A caller token (docs/security.md, "Tokens in: callers").',
        },
      },
    },
  };
  return `${JSON.stringify(oasSpelling(document), null, 2)}\n`;
}

/** Writes the document, or with `check` compares it; false when the file is stale. */
export async function genOpenApi(check: boolean): Promise<boolean> {
  const want = renderOpenApi();
  if (!check) {
    await writeFile(FILE, want);
    return true;
  }
  return (await readFile(FILE, "utf8").catch(() => "")) === want;
}
