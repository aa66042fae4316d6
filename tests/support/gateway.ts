/**
 * Builds a gateway over test providers and calls it in process (`app.request`); the gateway still
 * reaches the providers over real HTTP on 127.0.0.1.
 */
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { readFileSync } from "node:fs";
import assert from "node:assert/strict";
import { createGateway } from "../../src/http/mod.ts";
import { type Env, type Ports, readSettings, type Settings } from "../../src/config/mod.ts";
import { nodePorts } from "../../src/runtime/node-fetch.ts";
import { parseCidr } from "../../src/io/ip-rules.ts";

const ajv = new Ajv2020({ allErrors: true, strict: false });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);
const schema = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../schemas/${name}.json`, import.meta.url), "utf8"));
export const validators = {
  envelope: ajv.compile(schema("envelope")),
  manifest: ajv.compile(schema("provider-manifest")),
  providerRequest: ajv.compile(schema("provider-request")),
  providerResponse: ajv.compile(schema("provider-response")),
  searchRequest: ajv.compile(schema("search-request")),
  traceBatch: ajv.compile(schema("trace-batch")),
};

/** Asserts a value is a valid envelope (schemas/envelope.json) and returns it typed loosely. */
// deno-lint-ignore no-explicit-any
export function assertEnvelope(value: unknown): any {
  const ok = validators.envelope(value);
  assert.ok(
    ok,
    `not a valid envelope: ${JSON.stringify(validators.envelope.errors)}\n${
      JSON.stringify(value).slice(0, 2000)
    }`,
  );
  return value;
}

export type ProviderEntry = Record<string, unknown> & { name: string };

export function manifestOf(providers: ProviderEntry[], extra: Record<string, unknown> = {}) {
  return {
    schema_version: "tracefetch.providers.v1",
    providers: providers.map((p) => ({ scope: p.name, ...p })),
    ...extra,
  };
}

/**
 * Each runtime's production ports: on Node the undici-based client that `npm start` uses, on Deno
 * its own fetch. The provider matrix therefore runs through the client each runtime ships with.
 */
export const runtimePorts: Ports = "Deno" in globalThis ? {} : nodePorts();

/**
 * Settings as a composition root makes them: `env` parsed by readSettings and the manifest given
 * as JSON text (a string) or a value, then `overrides` for what a test sets directly.
 * `allowLoopback: true` among them also lets the manifest name loopback endpoints, as the embedded
 * default's does.
 */
export function settingsFor(
  manifest: unknown,
  env: Env = {},
  overrides: Partial<Settings> = {},
): Settings {
  const read = readSettings(env, { parseCidr });
  const loopback = overrides.allowLoopback === true;
  const input = typeof manifest === "string" ? { text: manifest } : { value: manifest };
  return { ...read.withManifest({ ...input, loopback }), ...overrides };
}

/** What a test gateway is built from besides its providers. */
export type TestGateway = {
  /** Variables, as an operator would set them. */
  env?: Env;
  /** Settings set directly (limits without a variable, or a value the test wants). */
  settings?: Partial<Settings>;
  /** Ports beside the runtime's own (builtins, a clock, a sink). */
  ports?: Ports;
};

/**
 * A gateway over these providers. It asks no provider `describe` unless the test says so, so a
 * test that counts the requests a provider receives counts only its searches.
 */
export function gateway(providers: ProviderEntry[], options: TestGateway = {}) {
  // Test providers listen on 127.0.0.1.
  const settings = settingsFor(manifestOf(providers), options.env, {
    allowLoopback: true,
    describeProviders: false,
    ...options.settings,
  });
  return createGateway(settings, { ...runtimePorts, ...options.ports });
}

/** GET /v1/search?q=... (plus params) and the envelope, validated. */
export async function search(
  app: ReturnType<typeof gateway>,
  params: Record<string, string> = {},
  init: RequestInit = {},
) {
  const qs = new URLSearchParams({ q: "deadline", ...params });
  const res = await app.request(`/v1/search?${qs}`, init);
  const text = await res.text();
  return { res, text, body: assertEnvelope(JSON.parse(text)) };
}

/** POST /v1/search with a raw body. */
export async function post(
  app: ReturnType<typeof gateway>,
  body: BodyInit,
  headers: Record<string, string> = { "content-type": "application/json" },
) {
  const res = await app.request("/v1/search", { method: "POST", body, headers });
  const text = await res.text();
  return { res, text, body: assertEnvelope(JSON.parse(text)) };
}
