/**
 * `GET /metrics` (docs/deploy.md, "Observing it"): the Prometheus text format, the names and
 * labels docs/deploy.md lists, counted as searches run, and never a query, a locator, a URL path, a
 * caller or a token in a label. Runs unchanged under Node and `deno test`.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { SignJWT } from "jose";
import { gateway } from "./support/gateway.ts";
import { answer, startServer, type TestServer } from "./support/servers.ts";
import { PrometheusMetrics } from "../src/observe/prometheus-metrics.ts";
import { AUDIENCE, ISSUER } from "./support/auth-keys.ts";

const SECRET = "a-metrics-test-secret-of-at-least-32-bytes";
const QUERY = "zebra-secret-query-words";
const LOCATOR = "https://hidden.example/private-locator-path";
const SUBJECT = "caller-subject-7731";

const telemetry = () => ({ metrics: new PrometheusMetrics(), tracing: null });

async function token(scope: string): Promise<string> {
  return await new SignJWT({ scope }).setProtectedHeader({ alg: "HS256" }).setIssuer(ISSUER)
    .setAudience(AUDIENCE).setSubject(SUBJECT).setExpirationTime("5m")
    .sign(new TextEncoder().encode(SECRET));
}

/** Every sample line's labels, as `name{labels}` without the value. */
function series(text: string): string[] {
  return text.split("\n").filter((l) => l !== "" && !l.startsWith("#")).map((l) =>
    l.slice(0, l.lastIndexOf(" "))
  );
}

describe("GET /metrics", () => {
  let good: TestServer;
  let bad: TestServer;
  before(async () => {
    good = await startServer(answer("good", "good", [{ title: "A", locator: LOCATOR }]));
    bad = await startServer((_req, res) => {
      res.writeHead(503, { "content-type": "text/plain" });
      res.end("down");
    });
  });
  after(async () => {
    await good.close();
    await bad.close();
  });

  it("answers the Prometheus text format with every metric, counted per attempt and search", async () => {
    const app = gateway([
      { name: "good", endpoint: good.url, cache_ttl_seconds: 60 },
      { name: "bad", endpoint: bad.url },
    ], {
      env: {
        TRACEFETCH_SUSPEND_PROVIDERS: "off",
        TRACEFETCH_AUTH_SECRET: SECRET,
        TRACEFETCH_AUTH_ISSUER: ISSUER,
        TRACEFETCH_AUTH_AUDIENCE: AUDIENCE,
      },
      ports: { telemetry: telemetry() },
    });
    const auth = { authorization: `Bearer ${await token("tracefetch:*")}` };
    for (let i = 0; i < 2; i++) {
      const response = await app.request(`/v1/search?q=${QUERY}`, { headers: auth });
      assert.equal(response.status, 200);
      await response.body?.cancel();
    }
    const refused = await app.request("/v1/search?q=x", {
      headers: { authorization: "Bearer a.b.c" },
    });
    assert.equal(refused.status, 401);
    await refused.body?.cancel();
    const response = await app.request("/metrics");
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    for (
      const name of [
        "tracefetch_searches_total",
        "tracefetch_search_duration_seconds",
        "tracefetch_provider_attempts_total",
        "tracefetch_provider_attempt_duration_seconds",
        "tracefetch_provider_bytes_read_total",
        "tracefetch_provider_cost_micros_total",
        "tracefetch_provider_suspended",
        "tracefetch_cache_lookups_total",
        "tracefetch_caller_refusals_total",
        "tracefetch_searches_in_flight",
        "tracefetch_shared_state_fallbacks_total",
        "http_server_request_duration_seconds",
      ]
    ) assert.match(text, new RegExp(`^# TYPE ${name} `, "m"), name);
    const lines = series(text);
    const value = (line: string) =>
      Number(text.split("\n").find((l) => l.startsWith(`${line} `))?.split(" ").at(-1));
    assert.equal(value('tracefetch_searches_total{code="partial"}'), 2, text);
    const total = (prefix: string) =>
      text.split("\n").filter((l) => l.startsWith(prefix)).reduce(
        (sum, l) => sum + Number(l.split(" ").at(-1)),
        0,
      );
    assert.equal(total('tracefetch_provider_attempts_total{provider="bad"'), 2);
    assert.equal(total('tracefetch_provider_attempts_total{provider="good"'), 2);
    // `good` caches its answers: each lookup is a miss or (once the first answer is kept) a hit.
    assert.equal(total('tracefetch_cache_lookups_total{provider="good"'), 2);
    assert.ok(value('tracefetch_cache_lookups_total{provider="good",result="miss"}') >= 1);
    assert.equal(value('tracefetch_cache_lookups_total{provider="bad",result="bypass"}'), 2);
    assert.ok(value('tracefetch_provider_bytes_read_total{provider="good"}') > 0);
    assert.equal(value('tracefetch_provider_suspended{provider="bad"}'), 0);
    assert.equal(value('tracefetch_caller_refusals_total{code="token_invalid"}'), 1);
    assert.equal(value("tracefetch_searches_in_flight"), 0);
    assert.ok(
      lines.some((l) =>
        l.startsWith('http_server_request_duration_seconds_count{http_route="/v1/search"') &&
        l.includes('http_request_method="GET"') && l.includes('http_response_status_code="200"')
      ),
    );
    // Labels carry names and codes only.
    for (const secret of [QUERY, LOCATOR, "hidden.example", SUBJECT, "Bearer", "q="]) {
      assert.ok(!text.includes(secret), `the metrics carry ${secret}`);
    }
  });

  it("labels an unmatched path as such, never with the path", async () => {
    const app = gateway([{ name: "good", endpoint: good.url }], {
      ports: { telemetry: telemetry() },
    });
    await (await app.request("/no-such-route-abc123")).body?.cancel();
    const text = await (await app.request("/metrics")).text();
    assert.ok(!text.includes("no-such-route-abc123"));
    assert.match(
      text,
      /http_route="unmatched",http_request_method="GET",http_response_status_code="404"/,
    );
  });

  it("is 404 where the runtime gave the gateway no metrics registry", async () => {
    const app = gateway([{ name: "good", endpoint: good.url }]);
    const response = await app.request("/metrics");
    assert.equal(response.status, 404);
    assert.equal((await response.json()).code, "not_found");
  });

  it("with TRACEFETCH_REQUIRE_AUTH needs tracefetch-metrics or tracefetch-admin", async () => {
    const app = gateway([{ name: "good", endpoint: good.url }], {
      env: {
        TRACEFETCH_REQUIRE_AUTH: "on",
        TRACEFETCH_AUTH_SECRET: SECRET,
        TRACEFETCH_AUTH_ISSUER: ISSUER,
        TRACEFETCH_AUTH_AUDIENCE: AUDIENCE,
      },
      ports: { telemetry: telemetry() },
    });
    const asked = async (scope: string | null) => {
      const headers: Record<string, string> = scope === null
        ? {}
        : { authorization: `Bearer ${await token(scope)}` };
      const response = await app.request("/metrics", { headers });
      await response.body?.cancel();
      return response.status;
    };
    assert.equal(await asked(null), 401);
    assert.equal(await asked("tracefetch:*"), 403);
    assert.equal(await asked("tracefetch-metrics"), 200);
    assert.equal(await asked("tracefetch-admin"), 200);
    const text = await (await app.request("/metrics", {
      headers: { authorization: `Bearer ${await token("tracefetch-metrics")}` },
    })).text();
    assert.match(text, /^tracefetch_caller_refusals_total\{code="unauthorized"\} 1$/m);
    assert.match(text, /^tracefetch_caller_refusals_total\{code="forbidden"\} 1$/m);
  });
});
