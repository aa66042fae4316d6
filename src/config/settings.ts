/**
 * Settings: every variable the gateway, its runtimes and the CLI understand, parsed once at a
 * composition root into one typed value, with one grammar per kind. A value that is not understood
 * stops the start with one line that names the variable and what it accepts.
 *
 * The root calls readSettings once; the manifest's location is one of the settings, so the root
 * loads the manifest it names (a file, a bundled text, the embedded default) and hands it back to
 * `withManifest`, which validates it and reads the bearer secrets it names from the same
 * environment. Nothing below the roots reads an environment.
 */
import type { AuthVariables } from "./auth-settings.ts";
import type { BuiltinKeys } from "../builtins/mod.ts";
import { ConfigError } from "../protocol/config-error.ts";
import {
  DEFAULT_BODY_TIMEOUT_MS,
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_MAX_INFLIGHT,
  DEFAULT_MAX_PROVIDERS,
  HEARTBEAT_INTERVAL_MS,
  MAX_SEARCH_BODY_BYTES,
} from "../protocol/limits.ts";
import {
  MAX_BODIES_IN_READ_PER_CLIENT,
  MAX_BODY_BYTES_IN_READ,
} from "../protocol/admission-limits.ts";
import {
  DEFAULT_TRACE_BACKLOG,
  DEFAULT_TRACE_FILE_MAX_BYTES,
  DEFAULT_TRACE_WEBHOOK_TIMEOUT_MS,
  MAX_TRACE_WEBHOOK_TIMEOUT_MS,
} from "../protocol/trace-limits.ts";
import type { Manifest } from "../protocol/manifest-schema.ts";
import {
  type ManifestOptions,
  manifestRefusal,
  parseManifestText,
  validateManifest,
} from "../protocol/validate-manifest.ts";
import { MIN_HS256_SECRET_BYTES } from "../protocol/limits.ts";
import { MIN_TRACE_SECRET_BYTES } from "../protocol/trace-limits.ts";
import type { CidrRange } from "../io/ip-rules.ts";
import {
  addressRanges,
  apiKey,
  type Env,
  flag,
  integer,
  misspelled,
  origins,
  positive,
  readVariables,
  secret,
  text,
  url,
} from "./env-values.ts";
import { type StateVariables, stateVariables } from "./state-settings.ts";
import { type CacheVariables, cacheVariables } from "./cache-settings.ts";
import { type TelemetryVariables, telemetryVariables } from "./telemetry-settings.ts";

/** Everything the environment configures, parsed, with the defaults applied. */
export type EnvSettings = {
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
  /** TRACEFETCH_TRUSTED_PROXIES: proxies whose X-Forwarded-For is read; empty, it is ignored. */
  trustedProxies: CidrRange[];
  /** TRACEFETCH_TRACE_* and TRACEFETCH_MINING_CONFIRMED (docs/security.md, "Search traces"). */
  mining: MiningVariables;
  /** TRACEFETCH_STATE_*: the store instances share (docs/deploy.md, "Shared state"). */
  state: StateVariables;
  /** TRACEFETCH_CACHE_*: the answer cache (docs/deploy.md, "The answer cache"). */
  cache: CacheVariables;
  /** OTEL_*: traces over OTLP/HTTP (docs/deploy.md, "Observing it"). */
  telemetry: TelemetryVariables;
  /** EXA_API_KEY, EXA_BASE_URL, GITHUB_TOKEN, GITHUB_API_URL: the remote built-ins' keys. */
  builtins: BuiltinKeys;
  /** What was set but is ignored, one line each (a TRACEFETCH_* name that is a likely slip). */
  warnings: string[];
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

/** Everything one gateway runs with: the environment's settings, its manifest, and its secrets. */
export type Settings = Omit<EnvSettings, "manifest" | "mining"> & {
  /** The validated manifest. */
  manifest: Manifest;
  /** The values of the secrets `auth: bearer` providers name, by variable name; unset ones absent. */
  secrets: ReadonlyMap<string, string>;
  /** Search traces; null: this gateway records none whatever the variables say (the CLI's own runs). */
  mining: MiningVariables | null;
  /** Request bodies one client address may have in reading at once, apart from searches. */
  maxBodiesInRead: number;
  /** Bytes buffered across every request body being read. */
  maxBodyBytesInRead: number;
  /** Decoded bytes one search may read across its attempts. */
  searchBudgetBytes: number;
  /** How often a streamed search sends a heartbeat while waiting. */
  heartbeatMs: number;
  /** Connections one search may have waiting for headers at once (6 on Workers); null: unbounded. */
  maxPendingConnections: number | null;
};

/**
 * The manifest a root loaded for the settings: JSON text, a value already decoded, or a manifest
 * the root already validated under these settings' loopback rule (the CLI checks a file first, to
 * report each problem). `loopback` permits http: endpoints on loopback hosts whatever
 * TRACEFETCH_ALLOW_LOOPBACK says, for the embedded default, whose providers listen on loopback.
 */
export type ManifestInput =
  & ({ text: string } | { value: unknown } | { validated: Manifest })
  & { loopback?: boolean };

/** The environment, parsed; the settings once the root has loaded the manifest it names. */
export type ReadSettings = {
  env: EnvSettings;
  withManifest: (manifest: ManifestInput) => Settings;
};

/** Where `npm start` listens unless PORT says otherwise. */
const DEFAULT_PORT = 8787;
const DEFAULT_HOST = "127.0.0.1";
const HIGHEST_PORT = 65_535;

/**
 * Every variable the gateway reads but the shared state's and the cache's (state-settings.ts,
 * cache-settings.ts), each described by its schema; the address list's reads with the root's
 * parseCidr. The built-ins' base URLs are read apart: their URL policy depends on
 * TRACEFETCH_ALLOW_LOOPBACK.
 */
const variables = (readers: SettingsReaders) => ({
  HOST: text,
  PORT: integer(0, HIGHEST_PORT),
  TRACEFETCH_MANIFEST: text,
  TRACEFETCH_ALLOW_LOOPBACK: flag(),
  TRACEFETCH_MAX_PROVIDERS: positive,
  TRACEFETCH_MAX_INFLIGHT: positive,
  TRACEFETCH_HEADERS_TIMEOUT_MS: positive,
  TRACEFETCH_BODY_TIMEOUT_MS: positive,
  TRACEFETCH_SUSPEND_PROVIDERS: flag(true),
  TRACEFETCH_DESCRIBE_PROVIDERS: flag(true),
  TRACEFETCH_API_DOCS: flag(null),
  TRACEFETCH_AUTH_JWKS_URL: text,
  TRACEFETCH_AUTH_JWKS: text,
  TRACEFETCH_AUTH_SECRET: secret(MIN_HS256_SECRET_BYTES),
  TRACEFETCH_AUTH_ISSUER: text,
  TRACEFETCH_AUTH_AUDIENCE: text,
  TRACEFETCH_REQUIRE_AUTH: flag(),
  TRACEFETCH_SIGNING_JWK: text,
  TRACEFETCH_GATEWAY_ISSUER: text,
  TRACEFETCH_MCP_ORIGINS: origins,
  TRACEFETCH_TRUSTED_PROXIES: addressRanges(readers.parseCidr),
  TRACEFETCH_TRACE_FILE: text,
  TRACEFETCH_TRACE_FILE_MAX_BYTES: positive,
  TRACEFETCH_TRACE_WEBHOOK: text,
  TRACEFETCH_TRACE_WEBHOOK_TIMEOUT_MS: integer(1, MAX_TRACE_WEBHOOK_TIMEOUT_MS),
  TRACEFETCH_TRACE_QUEUE: text,
  TRACEFETCH_TRACE_SECRET: secret(MIN_TRACE_SECRET_BYTES),
  TRACEFETCH_TRACE_RAW_QUERIES: flag(),
  TRACEFETCH_TRACE_RAW_LOCATORS: flag(),
  TRACEFETCH_MINING_CONFIRMED: flag(),
  TRACEFETCH_TRACE_BACKLOG: positive,
  EXA_API_KEY: apiKey,
  GITHUB_TOKEN: apiKey,
});

/**
 * Every TRACEFETCH_* name something reads: the gateway's variables, the shared state's and the
 * cache's, the CLI's token variable, the manifest bundled at build time, and the Workers binding
 * of the shared state. Any other TRACEFETCH_* name close to one of these is reported as a slip.
 */
export const KNOWN_VARIABLES: readonly string[] = [
  ...Object.keys(variables({})),
  "TRACEFETCH_STATE_URL",
  "TRACEFETCH_STATE_PREFIX",
  "TRACEFETCH_STATE_TIMEOUT_MS",
  "TRACEFETCH_STATE_SECRET",
  "TRACEFETCH_STATE",
  "TRACEFETCH_CACHE_URL",
  "TRACEFETCH_CACHE_MAX_BYTES",
  "TRACEFETCH_METRICS",
  "TRACEFETCH_TOKEN",
  "TRACEFETCH_MANIFEST_FILE",
].filter((name) => name.startsWith("TRACEFETCH_"));

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

/**
 * What reads the settings' addresses, which this layer does not parse itself: the root hands in
 * src/io/ip-rules.ts's parseCidr (the worker loads it only when TRACEFETCH_TRUSTED_PROXIES or the
 * manifest's `fetch` block lists ranges, keeping ipaddr.js out of its main module). Without it,
 * TRACEFETCH_TRUSTED_PROXIES set or a manifest whose `fetch` block lists ranges is refused, never
 * taken unchecked.
 */
export type SettingsReaders = { parseCidr?: (text: string) => CidrRange | null };

/**
 * Parses every variable once; throws ConfigError naming the first one that is not understood.
 * Call it at a composition root, once.
 */
export function readSettings(env: Env, readers: SettingsReaders = {}): ReadSettings {
  const parsed = parseEnv(env, readers);
  return {
    env: parsed,
    withManifest: (input) => settingsWith(parsed, input, env, readers),
  };
}

function parseEnv(env: Env, readers: SettingsReaders): EnvSettings {
  const read = readVariables(env, variables(readers));
  const allowLoopback = read.TRACEFETCH_ALLOW_LOOPBACK;
  const baseUrls = readVariables(env, {
    EXA_BASE_URL: url({ kind: "endpoint", allowLoopback, role: "base" }),
    GITHUB_API_URL: url({ kind: "endpoint", allowLoopback, role: "base" }),
  });
  // A base URL is checked even when its key is unset: a mistyped override is worth refusing
  // before anyone adds a key. No message echoes a key or a base URL.
  const exaKey = read.EXA_API_KEY;
  const githubToken = read.GITHUB_TOKEN;
  return {
    host: read.HOST ?? DEFAULT_HOST,
    port: read.PORT ?? DEFAULT_PORT,
    manifest: read.TRACEFETCH_MANIFEST,
    allowLoopback,
    maxProviders: read.TRACEFETCH_MAX_PROVIDERS ?? DEFAULT_MAX_PROVIDERS,
    maxInflight: read.TRACEFETCH_MAX_INFLIGHT ?? DEFAULT_MAX_INFLIGHT,
    headersTimeoutMs: read.TRACEFETCH_HEADERS_TIMEOUT_MS ?? DEFAULT_HEADERS_TIMEOUT_MS,
    bodyTimeoutMs: read.TRACEFETCH_BODY_TIMEOUT_MS ?? DEFAULT_BODY_TIMEOUT_MS,
    suspendProviders: read.TRACEFETCH_SUSPEND_PROVIDERS,
    describeProviders: read.TRACEFETCH_DESCRIBE_PROVIDERS,
    apiDocs: read.TRACEFETCH_API_DOCS,
    auth: {
      jwksUrl: read.TRACEFETCH_AUTH_JWKS_URL,
      jwks: read.TRACEFETCH_AUTH_JWKS,
      secret: read.TRACEFETCH_AUTH_SECRET,
      issuer: read.TRACEFETCH_AUTH_ISSUER,
      audience: read.TRACEFETCH_AUTH_AUDIENCE,
      requireAuth: read.TRACEFETCH_REQUIRE_AUTH,
      signingJwk: read.TRACEFETCH_SIGNING_JWK,
      gatewayIssuer: read.TRACEFETCH_GATEWAY_ISSUER,
    },
    mcpOrigins: read.TRACEFETCH_MCP_ORIGINS,
    trustedProxies: read.TRACEFETCH_TRUSTED_PROXIES,
    mining: {
      file: read.TRACEFETCH_TRACE_FILE,
      fileMaxBytes: read.TRACEFETCH_TRACE_FILE_MAX_BYTES ?? DEFAULT_TRACE_FILE_MAX_BYTES,
      webhook: read.TRACEFETCH_TRACE_WEBHOOK,
      webhookTimeoutMs: read.TRACEFETCH_TRACE_WEBHOOK_TIMEOUT_MS ??
        DEFAULT_TRACE_WEBHOOK_TIMEOUT_MS,
      queue: read.TRACEFETCH_TRACE_QUEUE,
      secret: read.TRACEFETCH_TRACE_SECRET,
      rawQueries: read.TRACEFETCH_TRACE_RAW_QUERIES,
      rawLocators: read.TRACEFETCH_TRACE_RAW_LOCATORS,
      confirmed: read.TRACEFETCH_MINING_CONFIRMED,
      backlog: read.TRACEFETCH_TRACE_BACKLOG ?? DEFAULT_TRACE_BACKLOG,
    },
    state: stateVariables(env),
    cache: cacheVariables(env),
    telemetry: telemetryVariables(env),
    builtins: {
      exa: exaKey === null ? null : { apiKey: exaKey, baseUrl: baseUrls.EXA_BASE_URL },
      github: githubToken === null
        ? null
        : { token: githubToken, baseUrl: baseUrls.GITHUB_API_URL },
    },
    warnings: misspelled(env, ["TRACEFETCH_"], KNOWN_VARIABLES),
  };
}

/** The settings with the manifest the root loaded: validated, and the secrets it names read. */
function settingsWith(
  parsed: EnvSettings,
  input: ManifestInput,
  env: Env,
  readers: SettingsReaders,
): Settings {
  const allowLoopback = input.loopback === true || parsed.allowLoopback;
  const manifest = "validated" in input
    ? input.validated
    : checkedManifest(input, { ...readers, allowLoopback });
  const secrets = new Map<string, string>();
  for (const spec of manifest.providers) {
    if (spec.auth.type !== "bearer") continue;
    const value = env[spec.auth.secret];
    if (value) secrets.set(spec.auth.secret, value);
  }
  const { manifest: _location, ...rest } = parsed;
  return {
    ...rest,
    allowLoopback,
    manifest,
    secrets,
    maxBodiesInRead: MAX_BODIES_IN_READ_PER_CLIENT,
    maxBodyBytesInRead: MAX_BODY_BYTES_IN_READ,
    searchBudgetBytes: MAX_SEARCH_BODY_BYTES,
    heartbeatMs: HEARTBEAT_INTERVAL_MS,
    maxPendingConnections: null,
  };
}

function checkedManifest(
  input: { text: string } | { value: unknown },
  options: ManifestOptions,
): Manifest {
  const checked = "text" in input
    ? parseManifestText(input.text, options)
    : validateManifest(input.value, options);
  if (!checked.ok) throw new ConfigError(manifestRefusal(checked.issues));
  return checked.manifest;
}
