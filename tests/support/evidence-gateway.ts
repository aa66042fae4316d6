/**
 * A loopback site with one article (navigation, cookie banner and footer around it) and a gateway
 * whose manifest opens 127.0.0.1 to fetch (`allow_private_cidrs`), signing receipts with a fresh
 * Ed25519 key: the world of the fetch and verify surface tests.
 */
import { exportJWK, generateKeyPair } from "jose";
import { listen, type Listener } from "./fetch-fixture.ts";
import { createGateway, type GatewayPorts } from "../../src/http/create-gateway.ts";
import { nodeFetchParts } from "../../src/runtime/node-evidence.ts";
import { manifestOf, runtimePorts } from "./gateway.ts";
import { parseCidr } from "../../src/io/ip-rules.ts";
import { answer, startServer } from "./servers.ts";
import { type Env, readSettings } from "../../src/config/mod.ts";

export const ISSUER = "https://gateway.test";

export const ARTICLE_HTML = `<!doctype html>
<html><head><title>Tide tables</title></head>
<body>
<div class="cookie-banner">We use cookies. Accept all cookies?</div>
<nav><a href="/">Home</a> | <a href="/about">About us</a> | <a href="/shop">Shop</a></nav>
<main><article>
<h1>Tide tables</h1>
<p>The moon pulls the sea toward it, and the water rises on the side of the earth that faces it.
Twice a day the tide comes in and goes out again, about fifty minutes later each day.</p>
<h2>Spring tides</h2>
<p>Spring tides come with a new moon and with a full moon, when the sun and the moon pull
together. Their range is the largest of the month.</p>
<p>See <a href="/neap">neap tides</a> for the other half of the cycle.</p>
<h2>Neap tides</h2>
<p>Neap tides come at the quarter moons, when the sun pulls across the moon's pull, and the
range is the smallest of the month.</p>
</article></main>
<footer>Copyright 2026 Harbour Almanac. All rights reserved.</footer>
</body></html>`;

/** The site: `/article` (HTML), `/notes.md` (markdown), robots.txt allowing all. */
export async function startSite(): Promise<Listener & { base: string }> {
  const site = await listen("127.0.0.1", 0, {
    "/article": (_req, res) => {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(ARTICLE_HTML);
    },
    "/notes.md": (_req, res) => {
      res.writeHead(200, { "content-type": "text/markdown; charset=utf-8" });
      res.end("# Notes\n\nLow water at noon.\n");
    },
    "/robots.txt": (_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("User-agent: *\nAllow: /\n");
    },
  });
  return { ...site, base: `http://127.0.0.1:${site.port}` };
}

/** A private Ed25519 JWK, as TRACEFETCH_SIGNING_JWK holds it. */
export async function signingJwk(kid = "receipts-1"): Promise<string> {
  const { privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
  return JSON.stringify({ ...(await exportJWK(privateKey)), kid });
}

export type EvidenceGatewayOptions = {
  /** The manifest's fetch block; null: none (fetching off). */
  fetch?: Record<string, unknown> | null;
  /** Sign receipts (the default) or not. */
  sign?: boolean;
  extra?: Record<string, unknown>;
  env?: Env;
  ports?: GatewayPorts;
};

/** A gateway over one well-behaved provider, fetching 127.0.0.1 pages. */
export async function evidenceGateway(options: EvidenceGatewayOptions = {}) {
  const provider = await startServer(answer("p", "p", []));
  const env: Record<string, string | undefined> = { ...options.env };
  if (options.sign !== false) {
    env.TRACEFETCH_SIGNING_JWK = await signingJwk();
    env.TRACEFETCH_GATEWAY_ISSUER = ISSUER;
  }
  const fetch = options.fetch === undefined
    ? { allow_private_cidrs: ["127.0.0.1/32"] }
    : options.fetch;
  const manifest = manifestOf([{ name: "p", endpoint: provider.url }], {
    ...(fetch === null ? {} : { fetch }),
    ...options.extra,
  });
  const read = readSettings(env, { parseCidr });
  const settings = {
    ...read.withManifest({ value: manifest, loopback: true }),
    allowLoopback: true,
    describeProviders: false,
  };
  const app = createGateway(settings, {
    ...runtimePorts,
    evidence: nodeFetchParts(),
    ...options.ports,
  });
  return { app, close: () => provider.close() };
}
