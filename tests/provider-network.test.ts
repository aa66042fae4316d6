/**
 * The attempt-outcome table (docs/protocol.md) for exchanges that break: refused, unresolvable, reset,
 * held, dripped, cut short. Each case searches a faulty provider next to a healthy one through a
 * real gateway over 127.0.0.1 and is bounded by a 1-2 s provider timeout.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { type Handler, hold, startServer } from "./support/servers.ts";
import { assertFailed, faultySearch, LEAKY_HEADERS, responseBody } from "./support/outcomes.ts";

const PARTIAL = '{"schema_version":"tracefetch.provider-response.v1","provider":"faulty",';

/** Sends a 200 with its headers and the first bytes of a body, then runs `then` on the socket. */
function startThen(then: Handler, headers: Record<string, string> = {}): Handler {
  return (req, res, body) => {
    res.writeHead(200, { "content-type": "application/json", ...LEAKY_HEADERS, ...headers });
    res.write(PARTIAL);
    // Long enough for the gateway to have the status line and headers in hand.
    setTimeout(() => then(req, res, body), 50);
  };
}

describe("provider outcomes: the connection fails before a response", () => {
  it("a refused connection (a port that was listening, then closed) is adapter_unavailable/connection_refused", async () => {
    const gone = await startServer(hold);
    await gone.close();
    const run = await faultySearch({ endpoint: gone.url });
    assertFailed(run, {
      outcome: "adapter_unavailable",
      code: "connection_refused",
      retryable: true,
    });
  });

  it("an unresolvable host (.invalid, RFC 6761) is adapter_unavailable/dns_failure", async () => {
    const run = await faultySearch({ endpoint: "https://nonexistent.invalid/search" });
    assertFailed(run, { outcome: "adapter_unavailable", code: "dns_failure", retryable: true });
    assert.ok(run.elapsed < 2_000, `the lookup took ${run.elapsed} ms`);
  });

  it("a socket reset before any response is adapter_unavailable/connection_reset", async () => {
    const run = await faultySearch((_req, res) => {
      res.socket?.destroy();
    });
    assertFailed(run, {
      outcome: "adapter_unavailable",
      code: "connection_reset",
      retryable: true,
    });
    assert.equal(run.requests.length, 1);
  });
});

describe("provider outcomes: deadlines", () => {
  it("headers never sent with timeout_seconds 1 is a timeout with budget provider_timeout after about 1 s", async () => {
    const run = await faultySearch(hold, { entry: { timeout_seconds: 1 } });
    assertFailed(run, {
      outcome: "timeout",
      code: "timeout",
      retryable: true,
      budget: "provider_timeout",
    });
    const latency = run.attempt.latency_ms;
    assert.ok(latency >= 1_000 && latency <= 1_500, `latency_ms ${latency}`);
    assert.ok(run.elapsed < 1_500, `the search took ${run.elapsed} ms`);
    assert.equal(run.attempt.message, "no complete answer before the provider's timeout");
  });

  it("a request timeout_ms below the provider timeout is a timeout with budget caller_deadline", async () => {
    const run = await faultySearch(hold, {
      entry: { timeout_seconds: 1 },
      params: { timeout_ms: "300" },
    });
    assertFailed(run, {
      outcome: "timeout",
      code: "timeout",
      retryable: true,
      budget: "caller_deadline",
    });
    // The attempt's budget is the caller's 300 ms minus the 25 ms fusion reserve, counted from the
    // request's arrival: the search lasts that long, and the attempt (which starts once the search
    // is planned, later on a busy machine) ends by then, well before the provider's 1 s.
    const latency = run.attempt.latency_ms;
    assert.ok(latency <= 450, `latency_ms ${latency}`);
    assert.ok(run.elapsed >= 270 && run.elapsed < 500, `the search took ${run.elapsed} ms`);
    assert.equal(run.attempt.message, "no complete answer before the caller's deadline");
  });

  it("a body that drips a byte every 100 ms past the timeout is a timeout (provider_timeout), not a success", async () => {
    let chunks = 0;
    const run = await faultySearch((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", ...LEAKY_HEADERS });
      res.write("{");
      const timer = setInterval(() => {
        chunks++;
        res.write(" ");
      }, 100);
      res.on("close", () => clearInterval(timer));
    }, { entry: { timeout_seconds: 1 } });
    assertFailed(run, {
      outcome: "timeout",
      code: "timeout",
      retryable: true,
      budget: "provider_timeout",
    });
    const latency = run.attempt.latency_ms;
    assert.ok(latency >= 1_000 && latency <= 1_500, `latency_ms ${latency}`);
    // The drip really was in progress when the deadline fired.
    assert.ok(chunks >= 5, `only ${chunks} chunks were sent`);
  });
});

describe("provider outcomes: the connection is lost mid-body", () => {
  it("a reset after a 200, mid-body, is search_failed/connection_lost and retryable", async () => {
    const run = await faultySearch(startThen((_req, res) => {
      res.socket?.destroy();
    }));
    assertFailed(run, { outcome: "search_failed", code: "connection_lost", retryable: true });
  });

  it("a body shorter than its Content-Length, then the socket ends, is search_failed/connection_lost", async () => {
    const full = responseBody("faulty", []);
    const run = await faultySearch(
      startThen((_req, res) => {
        res.socket?.end();
      }, { "content-length": String(Buffer.byteLength(full)) }),
    );
    assertFailed(run, { outcome: "search_failed", code: "connection_lost", retryable: true });
  });

  it("a chunked body that ends without its last chunk is search_failed/connection_lost", async () => {
    const run = await faultySearch(startThen((_req, res) => {
      res.socket?.end();
    }));
    assertFailed(run, { outcome: "search_failed", code: "connection_lost", retryable: true });
  });
});
