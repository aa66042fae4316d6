/**
 * One URL policy (src/protocol/url-policy.ts) for every URL this project calls: the gateway URL
 * the CLI talks to, and the endpoint `npm run conformance` checks, refuse what it refuses, with
 * its words, before anything is sent.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { endpointProblem, keepsSecretsInTransit } from "../src/protocol/url-policy.ts";
import { parseGatewayUrl, tokenTransportProblem } from "../src/cli/resolve-target.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

describe("the gateway URL the CLI calls", () => {
  it("plain http to any host is a gateway URL (anonymous calls), ending in a slash", () => {
    for (const raw of ["http://gateway.example", "http://127.0.0.1:8787", "https://g.example/p"]) {
      const parsed = parseGatewayUrl(raw);
      assert.equal(parsed.ok, true, raw);
      if (parsed.ok) assert.equal(parsed.url.pathname.endsWith("/"), true);
    }
  });

  it("credentials, a query, a fragment, another scheme or a relative URL are refused, each saying why", () => {
    const cases: Array<[string, RegExp]> = [
      [
        "https://user:pw@gateway.example",
        /^the gateway URL must not carry credentials; use a token variable$/,
      ],
      ["https://gateway.example/?a=1", /^the gateway URL must not carry a query$/],
      ["https://gateway.example/#top", /^the gateway URL must not carry a fragment$/],
      ["ftp://gateway.example", /^the gateway URL must use https: or http:$/],
      ["gateway.example", /^the gateway URL "gateway\.example" must be an absolute URL/],
    ];
    for (const [raw, message] of cases) {
      const parsed = parseGatewayUrl(raw);
      assert.equal(parsed.ok, false, raw);
      if (!parsed.ok) assert.match(parsed.message, message);
    }
  });

  it("a refused URL that parses is never echoed: it may carry a password", () => {
    const parsed = parseGatewayUrl("https://user:hunter2@gateway.example");
    assert.equal(parsed.ok, false);
    if (!parsed.ok) assert.equal(parsed.message.includes("hunter2"), false);
  });

  it("a token goes over https: or to a loopback host, never over plain http elsewhere", () => {
    const sendable = [
      "https://g.example/",
      "http://127.0.0.1:8787/",
      "http://localhost/",
      "http://[::1]/",
    ];
    for (const raw of sendable) assert.equal(tokenTransportProblem(new URL(raw), "T"), null, raw);
    assert.match(
      tokenTransportProblem(new URL("http://gateway.example/"), "TRACEFETCH_TOKEN") ?? "",
      /^refusing to send the token in TRACEFETCH_TOKEN over plain http to gateway\.example/,
    );
  });

  it("what may carry a token is what a provider endpoint may be: the same rule", () => {
    for (
      const raw of [
        "https://x.example/",
        "http://x.example/",
        "http://127.0.0.2/",
        "http://localhost:1/",
      ]
    ) {
      assert.equal(keepsSecretsInTransit(new URL(raw)), endpointProblem(raw, true) === null, raw);
    }
  });
});

describe("npm run conformance", () => {
  /** Runs the script as package.json names it, so this holds whatever the script becomes. */
  function conformance(...args: string[]) {
    return spawnSync("npm", ["run", "--silent", "conformance", "--", ...args], {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 60_000,
    });
  }

  it("an endpoint over plain http to a host that is not loopback is a usage error (exit 2) naming the rule, not a crash", () => {
    const run = conformance(
      "http://provider.example/search",
      "--name",
      "papers",
      "--scope",
      "papers",
    );
    const output = `${run.stdout}${run.stderr}`;
    assert.equal(run.status, 2, output);
    assert.match(output, /the endpoint must use https: \(http: is allowed only on loopback\)/);
    assert.doesNotMatch(output, /TypeError|\n\s+at /);
  });

  it("an endpoint that is not a URL, or carries credentials, is refused the same way", () => {
    for (
      const [raw, message] of [
        ["not a url", /the endpoint must be an absolute URL/],
        ["https://user:pw@provider.example/search", /the endpoint must not carry credentials/],
      ] as const
    ) {
      const run = conformance(raw, "--name", "papers", "--scope", "papers");
      const output = `${run.stdout}${run.stderr}`;
      assert.equal(run.status, 2, output);
      assert.match(output, message);
      assert.doesNotMatch(output, /TypeError|\n\s+at /);
    }
  });
});
