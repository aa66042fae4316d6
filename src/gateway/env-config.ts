/**
 * The environment, read in one place: every variable the gateway, its runtimes and the CLI
 * understand is parsed here, with one grammar per kind, and a value that is not understood stops
 * the start with one line that names the variable and what it accepts.
 */
import type { AuthVariables } from "../auth/auth-settings.ts";
import { ConfigError } from "../protocol/config-error.ts";
import {
  DEFAULT_BODY_TIMEOUT_MS,
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_MAX_INFLIGHT,
  DEFAULT_MAX_PROVIDERS,
  DEFAULT_TRACE_BACKLOG,
  DEFAULT_TRACE_FILE_MAX_BYTES,
  DEFAULT_TRACE_WEBHOOK_TIMEOUT_MS,
  MAX_ECHOED_SETTING_CHARS,
  MAX_TRACE_WEBHOOK_TIMEOUT_MS,
} from "../protocol/limits.ts";

/** Environment variables or Workers bindings, by name. */
export type Env = Readonly<Record<string, string | undefined>>;

/** Everything the environment configures, parsed, with the defaults applied. */
export type EnvConfig = {
  /** HOST: where `npm start` and `deno task dev` listen. */
  host: string;
  /** PORT; 0 lets the system pick a free port. */
  port: number;
  /** TRACEFETCH_MANIFEST: inline JSON (it starts with `{`) or a file path; null for the default. */
  manifest: string | null;
  /** TRACEFETCH_ALLOW_LOOPBACK: permit `http:` endpoints on loopback hosts. */
  allowLoopback: boolean;
  /** TRACEFETCH_MAX_PROVIDERS */
  maxProviders: number;
  /** TRACEFETCH_MAX_INFLIGHT */
  maxInflight: number;
  /** TRACEFETCH_HEADERS_TIMEOUT_MS (Node only: Deno and Workers read headers themselves). */
  headersTimeoutMs: number;
  /** TRACEFETCH_BODY_TIMEOUT_MS */
  bodyTimeoutMs: number;
  /** TRACEFETCH_SUSPEND_PROVIDERS: suspend a provider that keeps failing (on unless set off). */
  suspendProviders: boolean;
  /** TRACEFETCH_DESCRIBE_PROVIDERS: ask each provider `describe` in the background (on unless set off). */
  describeProviders: boolean;
  /** TRACEFETCH_API_DOCS: serve the API reference at /docs; null: the runtime's default. */
  apiDocs: boolean | null;
  /** TRACEFETCH_AUTH_*, TRACEFETCH_REQUIRE_AUTH, TRACEFETCH_SIGNING_JWK and _GATEWAY_ISSUER. */
  auth: AuthVariables;
  /** TRACEFETCH_MCP_ORIGINS: the browser origins `/mcp` accepts (docs/mcp.md), serialised. */
  mcpOrigins: string[];
  /** TRACEFETCH_TRACE_* and TRACEFETCH_MINING_CONFIRMED (docs/security.md, "Search traces"). */
  mining: MiningVariables;
};

/** The search-trace variables as read; which combinations start is checked by resolveConfig. */
export type MiningVariables = {
  /** TRACEFETCH_TRACE_FILE: a JSONL file (Node and Deno). */
  file: string | null;
  /** TRACEFETCH_TRACE_FILE_MAX_BYTES: the file is rotated before it passes this. */
  fileMaxBytes: number;
  /** TRACEFETCH_TRACE_WEBHOOK: an https URL batches of signed traces are POSTed to. */
  webhook: string | null;
  /** TRACEFETCH_TRACE_WEBHOOK_TIMEOUT_MS */
  webhookTimeoutMs: number;
  /** TRACEFETCH_TRACE_QUEUE: the name of a Workers Queue binding. */
  queue: string | null;
  /** TRACEFETCH_TRACE_SECRET: the HMAC key for queries, `sub` and non-public locators. */
  secret: string | null;
  /** TRACEFETCH_TRACE_RAW_QUERIES: keep each query's text (and filters) in the clear. */
  rawQueries: boolean;
  /** TRACEFETCH_TRACE_RAW_LOCATORS: keep locators only non-public providers found in the clear. */
  rawLocators: boolean;
  /** TRACEFETCH_MINING_CONFIRMED: the operator confirmed the sink; until then nothing is recorded. */
  confirmed: boolean;
  /** TRACEFETCH_TRACE_BACKLOG: traces waiting for the sink before the oldest is dropped. */
  backlog: number;
};

/** Where `npm start` listens unless PORT says otherwise. */
const DEFAULT_PORT = 8787;
const DEFAULT_HOST = "127.0.0.1";
const HIGHEST_PORT = 65_535;

/** The spellings a boolean variable accepts, in any case. */
export const BOOLEAN_SPELLINGS = "1/true/yes/on or 0/false/no/off";
const ON = new Set(["1", "true", "yes", "on"]);
const OFF = new Set(["0", "false", "no", "off"]);

/** The boolean variables, for the tests and the docs' table. */
export const BOOLEAN_VARIABLES = [
  "TRACEFETCH_ALLOW_LOOPBACK",
  "TRACEFETCH_REQUIRE_AUTH",
  "TRACEFETCH_SUSPEND_PROVIDERS",
  "TRACEFETCH_DESCRIBE_PROVIDERS",
  "TRACEFETCH_API_DOCS",
  "TRACEFETCH_TRACE_RAW_QUERIES",
  "TRACEFETCH_TRACE_RAW_LOCATORS",
  "TRACEFETCH_MINING_CONFIRMED",
] as const;

/** Parses every variable; throws ConfigError naming the first one that is not understood. */
export function configFromEnv(env: Env): EnvConfig {
  return {
    host: text(env, "HOST") ?? DEFAULT_HOST,
    port: integer(env, "PORT", 0, HIGHEST_PORT) ?? DEFAULT_PORT,
    manifest: text(env, "TRACEFETCH_MANIFEST"),
    allowLoopback: flag(env, "TRACEFETCH_ALLOW_LOOPBACK"),
    maxProviders: positive(env, "TRACEFETCH_MAX_PROVIDERS") ?? DEFAULT_MAX_PROVIDERS,
    maxInflight: positive(env, "TRACEFETCH_MAX_INFLIGHT") ?? DEFAULT_MAX_INFLIGHT,
    headersTimeoutMs: positive(env, "TRACEFETCH_HEADERS_TIMEOUT_MS") ??
      DEFAULT_HEADERS_TIMEOUT_MS,
    bodyTimeoutMs: positive(env, "TRACEFETCH_BODY_TIMEOUT_MS") ?? DEFAULT_BODY_TIMEOUT_MS,
    suspendProviders: text(env, "TRACEFETCH_SUSPEND_PROVIDERS") === null ||
      flag(env, "TRACEFETCH_SUSPEND_PROVIDERS"),
    describeProviders: text(env, "TRACEFETCH_DESCRIBE_PROVIDERS") === null ||
      flag(env, "TRACEFETCH_DESCRIBE_PROVIDERS"),
    apiDocs: text(env, "TRACEFETCH_API_DOCS") === null ? null : flag(env, "TRACEFETCH_API_DOCS"),
    auth: {
      jwksUrl: text(env, "TRACEFETCH_AUTH_JWKS_URL"),
      jwks: text(env, "TRACEFETCH_AUTH_JWKS"),
      secret: text(env, "TRACEFETCH_AUTH_SECRET"),
      issuer: text(env, "TRACEFETCH_AUTH_ISSUER"),
      audience: text(env, "TRACEFETCH_AUTH_AUDIENCE"),
      requireAuth: flag(env, "TRACEFETCH_REQUIRE_AUTH"),
      signingJwk: text(env, "TRACEFETCH_SIGNING_JWK"),
      gatewayIssuer: text(env, "TRACEFETCH_GATEWAY_ISSUER"),
    },
    mcpOrigins: origins(env, "TRACEFETCH_MCP_ORIGINS"),
    mining: {
      file: text(env, "TRACEFETCH_TRACE_FILE"),
      fileMaxBytes: positive(env, "TRACEFETCH_TRACE_FILE_MAX_BYTES") ??
        DEFAULT_TRACE_FILE_MAX_BYTES,
      webhook: text(env, "TRACEFETCH_TRACE_WEBHOOK"),
      webhookTimeoutMs: integer(
        env,
        "TRACEFETCH_TRACE_WEBHOOK_TIMEOUT_MS",
        1,
        MAX_TRACE_WEBHOOK_TIMEOUT_MS,
      ) ?? DEFAULT_TRACE_WEBHOOK_TIMEOUT_MS,
      queue: text(env, "TRACEFETCH_TRACE_QUEUE"),
      secret: text(env, "TRACEFETCH_TRACE_SECRET"),
      rawQueries: flag(env, "TRACEFETCH_TRACE_RAW_QUERIES"),
      rawLocators: flag(env, "TRACEFETCH_TRACE_RAW_LOCATORS"),
      confirmed: flag(env, "TRACEFETCH_MINING_CONFIRMED"),
      backlog: positive(env, "TRACEFETCH_TRACE_BACKLOG") ?? DEFAULT_TRACE_BACKLOG,
    },
  };
}

/**
 * A comma-separated list of web origins (`https://app.example`, a port when not the default),
 * each kept as a browser writes it in an Origin header, so a plain string comparison decides.
 */
function origins(env: Env, name: string): string[] {
  const items = (text(env, name) ?? "").split(",").map((item) => item.trim());
  return items.filter((item) => item !== "").map((item) => {
    const url = URL.canParse(item) ? new URL(item) : null;
    // Scheme, host and port only: anything more (a path, a query, credentials) shows in href.
    if (url === null || !/^https?:$/.test(url.protocol) || url.href !== `${url.origin}/`) {
      throw new ConfigError(
        `${name} must list origins such as https://app.example, comma-separated; got ${
          quoted(item)
        }`,
      );
    }
    return url.origin;
  });
}

/** A value with surrounding space removed; null when unset or blank (an empty value is unset). */
function text(env: Env, name: string): string | null {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? null : value;
}

function flag(env: Env, name: string): boolean {
  const value = text(env, name);
  if (value === null) return false;
  const word = value.toLowerCase();
  if (ON.has(word)) return true;
  if (OFF.has(word)) return false;
  throw new ConfigError(`${name} must be one of ${BOOLEAN_SPELLINGS}, got ${quoted(value)}`);
}

function positive(env: Env, name: string): number | null {
  return integer(env, name, 1, Number.MAX_SAFE_INTEGER);
}

function integer(env: Env, name: string, min: number, max: number): number | null {
  const value = text(env, name);
  if (value === null) return null;
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!(n >= min && n <= max)) {
    const what = min === 1 && max === Number.MAX_SAFE_INTEGER
      ? "a positive integer"
      : `an integer from ${min} to ${max}`;
    throw new ConfigError(`${name} must be ${what}, got ${quoted(value)}`);
  }
  return n;
}

/** The value as one line of JSON, cut short: an error line must stay one line. */
function quoted(value: string): string {
  return JSON.stringify(
    value.length > MAX_ECHOED_SETTING_CHARS
      ? `${value.slice(0, MAX_ECHOED_SETTING_CHARS)}...`
      : value,
  );
}
