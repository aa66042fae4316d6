/**
 * The world the mining tests search in: three providers on 127.0.0.1 whose answers and requests
 * carry secrets (a provider's bearer key, the token the gateway mints for one, snippets, titles,
 * a provider's error text, a locator only a non-public provider finds), a caller token with a
 * secret `sub`, and queries with a secret marker. Every trace is grepped for each of them.
 */
import assert from "node:assert/strict";
import * as v from "valibot";
import { compactVerify, createLocalJWKSet, exportJWK, generateKeyPair, SignJWT } from "jose";
import { type Trace, TraceBatchSchema, TraceSchema } from "../../src/protocol/trace-schema.ts";
import { TRACE_JWS_TYPE } from "../../src/protocol/trace-version.ts";
import { answer, type Handler, raw, startServer, type TestServer } from "./servers.ts";
import { AUDIENCE, ISSUER } from "./auth-keys.ts";
import { createGateway } from "../../src/http/mod.ts";
import type { Ports } from "../../src/config/mod.ts";
import { manifestOf, settingsFor } from "./gateway.ts";

export const SECRETS = {
  authSecret: `AUTHSECRET-${"k".repeat(40)}`,
  traceSecret: `TRACESECRET-${"h".repeat(40)}`,
  bearer: "PROVIDERSECRET-bearer-5f2c9a",
  sub: "SUBSECRET-alice-77d1",
  snippet: "SNIPPETSECRET",
  title: "TITLESECRET",
  errorText: "ERRORTEXTSECRET",
  query: "QUERYSECRET",
  privateLocator: "LOCATORSECRET",
} as const;

/** A page both a public and a non-public provider find: public, so kept in the clear. */
export const SHARED_LOCATOR = "https://shared.example/page";
export const PRIVATE_LOCATOR = `https://vault.example/${SECRETS.privateLocator}-1`;

const candidate = (locator: string, n: number) => ({
  title: `${SECRETS.title} ${n}`,
  locator,
  snippet: `${SECRETS.snippet} number ${n}`,
});

export type MiningWorld = {
  manifest: Record<string, unknown>;
  /** The variables every gateway of these tests starts with (no sink yet). */
  env: Record<string, string>;
  /** A caller token granting every scope, with SECRETS.sub as its `sub`. */
  callerToken: string;
  /** Every token the non-public provider received: they must never reach a trace either. */
  mintedTokens: () => string[];
  close: () => Promise<void>;
};

export async function startMiningWorld(): Promise<MiningWorld> {
  const notes = await startServer(answer("notes", "notes", [
    candidate("https://notes.example/a", 1),
    candidate(SHARED_LOCATOR, 2),
    candidate("https://notes.example/b", 3),
  ]));
  const vault = await startServer(answer("vault", "vault", [
    candidate(PRIVATE_LOCATOR, 4),
    candidate(SHARED_LOCATOR, 5),
  ]));
  const flaky = await startServer(raw(
    500,
    JSON.stringify({
      schema_version: "tracefetch.provider-error.v1",
      code: "search_failed",
      message: `${SECRETS.errorText}: the index is rebuilding`,
    }),
  ));
  const servers: TestServer[] = [notes, vault, flaky];
  const { privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
  const signingJwk = { ...(await exportJWK(privateKey)), kid: "mining-test" };
  const callerToken = await new SignJWT({ scope: "tracefetch:*" })
    .setProtectedHeader({ alg: "HS256" })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject(SECRETS.sub)
    .setIssuedAt()
    .setExpirationTime("1h")
    .sign(new TextEncoder().encode(SECRETS.authSecret));
  return {
    manifest: {
      schema_version: "tracefetch.providers.v1",
      providers: [
        {
          name: "notes",
          scope: "notes",
          endpoint: notes.url,
          auth: { type: "bearer", secret: "NOTES_KEY" },
        },
        {
          name: "vault",
          scope: "vault",
          endpoint: vault.url,
          sensitivity: "account-visible",
          auth: { type: "gateway-token" },
        },
        { name: "flaky", scope: "flaky", endpoint: flaky.url },
      ],
    },
    env: {
      TRACEFETCH_ALLOW_LOOPBACK: "1",
      TRACEFETCH_SUSPEND_PROVIDERS: "0",
      TRACEFETCH_DESCRIBE_PROVIDERS: "0",
      TRACEFETCH_AUTH_SECRET: SECRETS.authSecret,
      TRACEFETCH_AUTH_ISSUER: ISSUER,
      TRACEFETCH_AUTH_AUDIENCE: AUDIENCE,
      TRACEFETCH_SIGNING_JWK: JSON.stringify(signingJwk),
      TRACEFETCH_GATEWAY_ISSUER: "https://gateway.example",
      NOTES_KEY: SECRETS.bearer,
      TRACEFETCH_TRACE_SECRET: SECRETS.traceSecret,
    },
    callerToken,
    mintedTokens: () =>
      vault.requests.map((r) => String(r.headers.authorization ?? "").replace(/^Bearer /, "")),
    close: async () => {
      await Promise.all(servers.map((s) => s.close()));
    },
  };
}

/** A webhook receiver whose behaviour a test switches: take, fail (503), or never answer. */
export type Collector = TestServer & {
  mode: "ok" | "fail" | "hang";
  /** The bodies it took (answered 204), in arrival order. */
  taken: string[];
};

export async function startCollector(): Promise<Collector> {
  const state = { mode: "ok" as Collector["mode"], taken: [] as string[] };
  const handler: Handler = (_req, res, body) => {
    if (state.mode === "hang") return;
    if (state.mode === "fail") {
      res.writeHead(503, { "content-type": "text/plain" });
      res.end("collector is down");
      return;
    }
    state.taken.push(body);
    res.writeHead(204);
    res.end();
  };
  const server = await startServer(handler);
  return Object.defineProperties(server, {
    mode: {
      get: () => state.mode,
      set: (mode: Collector["mode"]) => {
        state.mode = mode;
      },
    },
    taken: { value: state.taken },
  }) as Collector;
}

/** Everything in an answer that a sink must never change: all but its id, timings and mining. */
// deno-lint-ignore no-explicit-any
export function answerOf(status: number, envelope: any): unknown {
  const { request_id: _id, mining: _mining, result, ...header } = envelope;
  const { latency_ms: _latency, candidates, ...rest } = result ?? {};
  return {
    status,
    header,
    result: rest,
    // deno-lint-ignore no-explicit-any
    candidates: (candidates ?? []).map(({ latency_ms: _l, ...attempt }: any) => attempt),
  };
}

/** Polls `check` until it holds, failing after `ms` with what it last saw. */
export async function eventually<T>(
  what: string,
  read: () => Promise<T>,
  check: (value: T) => boolean,
  ms = 30_000,
): Promise<T> {
  const until = Date.now() + ms;
  let last: T = await read();
  while (!check(last)) {
    if (Date.now() > until) {
      assert.fail(`${what}: still not so after ${ms} ms: ${JSON.stringify(last).slice(0, 500)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
    last = await read();
  }
  return last;
}

/**
 * The traces in the webhook bodies a collector took, each body's JWS verified with jose against
 * the gateway's JWKS (EdDSA, `typ: tracefetch-trace+jws`, the key's kid) and its payload checked
 * against the strict batch schema.
 */
export async function tracesOfBodies(
  bodies: readonly string[],
  jwks: { keys: Record<string, unknown>[] },
): Promise<Trace[]> {
  const keys = createLocalJWKSet(jwks as never);
  const traces: Trace[] = [];
  for (const body of bodies) {
    const { payload, protectedHeader } = await compactVerify(body, keys, {
      algorithms: ["EdDSA"],
    });
    assert.equal(protectedHeader.typ, TRACE_JWS_TYPE);
    assert.equal(protectedHeader.kid, "mining-test");
    const batch = v.parse(TraceBatchSchema, JSON.parse(new TextDecoder().decode(payload)));
    traces.push(...batch.traces as Trace[]);
  }
  return traces;
}

/** The traces of a JSONL file (the file sink's), each checked against the strict trace schema. */
export function tracesOfLines(text: string): Trace[] {
  return text.split("\n").filter((line) => line !== "").map((line) =>
    v.parse(TraceSchema, JSON.parse(line))
  );
}

/** The manifest of one provider, "notes", at `url`. */
export const notesManifest = (url: string) => manifestOf([{ name: "notes", endpoint: url }]);

/** A gateway over the "notes" provider at `url`, mining as `env` configures it. */
export function notesGateway(url: string, env: Record<string, string>, ports: Ports = {}) {
  const settings = settingsFor(notesManifest(url), env, {
    allowLoopback: true,
    describeProviders: false,
  });
  return createGateway(settings, ports);
}
