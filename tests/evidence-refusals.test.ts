/**
 * fetchEvidence's refusals and failures against a real site on 127.0.0.1 and a real DNS server:
 * robots.txt, fetch_disabled, content types, statuses, timeouts and cancels, domains, the loopback
 * switch, Node's pinned connector, and markup built to exhaust the extractor.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { type Evidence, fetchEvidence, fetchPolicyOf } from "../src/evidence/mod.ts";
import { nodeFetchParts } from "../src/runtime/node-evidence.ts";
import { readSettings } from "../src/config/settings.ts";
import { parseCidr } from "../src/io/ip-rules.ts";
import { fetchDeps, listen, policy, request } from "./support/fetch-fixture.ts";
import { type EvidenceSite, OPEN, startEvidenceSite, text } from "./support/evidence-site.ts";

let world: EvidenceSite;
before(async () => {
  world = await startEvidenceSite();
});
after(() => world.close());

describe("robots.txt", () => {
  it("never requests a page robots.txt disallows", async () => {
    const { deps } = fetchDeps(world.dns.server);
    for (const path of ["/private", "/no-gateway"]) {
      const outcome = await fetchEvidence(request(`${world.base}${path}`), OPEN, deps);
      assert.equal(outcome.outcome === "refused" && outcome.code, "robots_disallowed", path);
      assert.equal(world.asked(path), 0, `${path} was never requested`);
    }
  });

  it("reads the gateway's own group alone when robots.txt has one (RFC 9309 section 2.2.1)", async () => {
    const evidence = await world.fetched(`${world.base}/everyone-else`);
    assert.equal(evidence.route, "text_served");
  });

  it("never requests a disallowed page a redirect leads to", async () => {
    const { deps } = fetchDeps(world.dns.server);
    const outcome = await fetchEvidence(request(`${world.base}/to-private`), OPEN, deps);
    assert.equal(outcome.outcome === "refused" && outcome.code, "robots_disallowed");
    assert.equal(world.asked("/private"), 0);
  });

  it("asks an origin's robots.txt once for many pages", async () => {
    const { deps } = fetchDeps(world.dns.server);
    const before = world.asked("/robots.txt");
    await fetchEvidence(request(`${world.base}/plain`), OPEN, deps);
    await fetchEvidence(request(`${world.base}/served.md`), OPEN, deps);
    assert.equal(world.asked("/robots.txt") - before, 1);
  });

  it("allows every page when robots.txt is 4xx (unavailable), and disallows all on 5xx", async () => {
    const answers: Record<string, number> = { "/robots.txt": 404 };
    const other = await listen("127.0.0.1", 0, {
      "/robots.txt": (_req, res) => {
        res.writeHead(answers["/robots.txt"] ?? 404);
        res.end();
      },
      "/page": text("text/plain", "page"),
    });
    try {
      const at = `http://127.0.0.1:${other.port}/page`;
      const first = fetchDeps(world.dns.server);
      const allowed = await fetchEvidence(request(at), OPEN, first.deps);
      assert.equal(allowed.outcome, "fetched");
      assert.deepEqual((allowed as { evidence: Evidence }).evidence.robots, {
        allowed: true,
        unavailable: true,
      });
      answers["/robots.txt"] = 503;
      const second = fetchDeps(world.dns.server);
      const refused = await fetchEvidence(request(at), OPEN, second.deps);
      assert.equal(refused.outcome === "refused" && refused.code, "robots_disallowed");
      assert.equal(other.requests.filter((r) => r.path === "/page").length, 1);
    } finally {
      await other.close();
    }
  });
});

describe("failures and refusals", () => {
  it("answers fetch_disabled without a policy, and sends nothing", async () => {
    const { deps, guard } = fetchDeps(world.dns.server);
    const outcome = await fetchEvidence(request(`${world.base}/plain`), null, deps);
    assert.equal(outcome.outcome === "refused" && outcome.code, "fetch_disabled");
    assert.deepEqual(guard.sent, []);
  });

  it("refuses content types other than HTML, XHTML, text and markdown", async () => {
    const { deps } = fetchDeps(world.dns.server);
    for (const path of ["/json", "/png"]) {
      const outcome = await fetchEvidence(request(`${world.base}${path}`), OPEN, deps);
      assert.equal(outcome.outcome === "refused" && outcome.code, "unsupported_content_type");
    }
  });

  it("answers fetch_failed, retryable, with the status of a 5xx; not retryable for a 404", async () => {
    const { deps } = fetchDeps(world.dns.server);
    const down = await fetchEvidence(request(`${world.base}/fails`), OPEN, deps);
    assert.deepEqual(
      down.outcome === "failed" && [down.code, down.status_code, down.retryable],
      ["fetch_failed", 503, true],
    );
    const gone = await fetchEvidence(request(`${world.base}/gone`), OPEN, deps);
    assert.deepEqual(gone.outcome === "failed" && [gone.status_code, gone.retryable], [404, false]);
  });

  it("cuts a body that never ends at the fetch's timeout", async () => {
    const { deps } = fetchDeps(world.dns.server);
    const started = Date.now();
    const outcome = await fetchEvidence(
      request(`${world.base}/never-ends`, { timeout_ms: 500 }),
      OPEN,
      deps,
    );
    assert.deepEqual(
      outcome.outcome === "failed" && [outcome.reason, outcome.retryable],
      ["timeout", true],
    );
    assert.ok(Date.now() - started < 4_000, "ended near its timeout");
  });

  it("reads a gzip bomb's decoded body only to 5,000,000 bytes", async () => {
    const evidence = await world.fetched(`${world.base}/bomb`, { max_chars: 10 });
    assert.equal(evidence.bytes, 5_000_000);
    assert.equal(evidence.truncated, true);
  });

  it("answers cancelled, not retryable, when the caller goes away mid-body", async () => {
    const controller = new AbortController();
    const { deps } = fetchDeps(world.dns.server, controller.signal);
    setTimeout(() => controller.abort(), 200);
    const outcome = await fetchEvidence(request(`${world.base}/never-ends`), OPEN, deps);
    assert.deepEqual(
      outcome.outcome === "failed" && [outcome.reason, outcome.retryable],
      ["cancelled", false],
    );
  });

  it("answers fetch_failed, retryable, when nothing listens", async () => {
    const closed = await listen("127.0.0.1", 0);
    await closed.close();
    const { deps } = fetchDeps(world.dns.server);
    const outcome = await fetchEvidence(request(`http://127.0.0.1:${closed.port}/`), OPEN, deps);
    assert.equal(outcome.outcome, "failed");
    assert.equal(outcome.outcome === "failed" && outcome.retryable, true);
  });

  it("answers fetch_failed for a name with no address", async () => {
    const { deps } = fetchDeps(world.dns.server);
    const outcome = await fetchEvidence(request("http://nowhere.test/"), OPEN, deps);
    assert.equal(outcome.outcome === "failed" && outcome.reason, "dns_failure");
  });

  it("refuses domains deny_domains lists, and those allow_domains leaves out, before DNS", async () => {
    const { deps } = fetchDeps(world.dns.server);
    const before = world.dns.queries.length;
    const denied = policy({ allow_private_cidrs: ["127.0.0.1/32"], deny_domains: ["site.test"] });
    const onlyOther = policy({
      allow_private_cidrs: ["127.0.0.1/32"],
      allow_domains: ["other.test"],
    });
    for (
      const [p, url] of [[denied, `http://denied.site.test:${world.port}/plain`], [
        onlyOther,
        `http://site.test:${world.port}/plain`,
      ], [onlyOther, `${world.base}/plain`]] as const
    ) {
      const outcome = await fetchEvidence(request(url), p, deps);
      assert.equal(outcome.outcome === "refused" && outcome.code, "url_forbidden", url);
    }
    assert.equal(world.dns.queries.length, before, "no name was resolved");
    const allowed = policy({ allow_private_cidrs: ["127.0.0.1/32"], allow_domains: ["site.test"] });
    assert.equal(
      (await fetchEvidence(request(`http://site.test:${world.port}/plain`), allowed, deps)).outcome,
      "fetched",
    );
  });

  it("is not opened by TRACEFETCH_ALLOW_LOOPBACK", async () => {
    const settings = readSettings({ TRACEFETCH_ALLOW_LOOPBACK: "1" }, { parseCidr }).withManifest({
      value: { schema_version: "tracefetch.providers.v1", providers: [], fetch: {} },
    });
    const { deps, guard } = fetchDeps(world.dns.server);
    const outcome = await fetchEvidence(
      request(`${world.base}/plain`),
      fetchPolicyOf(settings.manifest.fetch),
      deps,
    );
    assert.equal(outcome.outcome === "refused" && outcome.code, "url_forbidden");
    assert.deepEqual(guard.sent, []);
  });
});

describe("Node's connector", () => {
  it("connects to the address it is given and never resolves the URL's name", async () => {
    const { connector } = nodeFetchParts();
    const sent = await connector.send({
      url: new URL(`http://never-resolved.invalid:${world.port}/echo-accept`),
      address: "127.0.0.1",
      headers: { accept: "text/plain", "user-agent": "t" },
      signal: new AbortController().signal,
    });
    assert.ok(sent.ok);
    const body = await new Response(sent.body).text();
    assert.equal(body.split("\n")[2], `never-resolved.invalid:${world.port}`);
  });
});

describe("hostile markup", () => {
  it("reads markup nested too deep for the extractor as plain text, quickly", async () => {
    const depth = 30_000;
    const deep = await listen("127.0.0.1", 0, {
      "/robots.txt": text("text/plain", ""),
      "/deep": text(
        "text/html",
        `<html><head><title>Deep</title></head><body>${"<div>".repeat(depth)}bottom${
          "</div>".repeat(depth)
        }</body></html>`,
      ),
    });
    try {
      const evidence = await world.fetched(`http://127.0.0.1:${deep.port}/deep`);
      assert.equal((evidence as { markdown: string }).markdown, "bottom");
      assert.equal(evidence.title, "Deep");
      assert.equal(evidence.route, "extracted");
    } finally {
      await deep.close();
    }
  });

  it("cuts markup past 500,000 characters before extracting, and says truncated", async () => {
    // Markup-heavy paragraphs: 1,200 of about 470 characters, each with a short text of its own.
    const paragraphs = Array.from(
      { length: 1_200 },
      (_, n) => `<p class="${"c".repeat(440)}">paragraph-${n} of the article.</p>`,
    ).join("");
    const long = await listen("127.0.0.1", 0, {
      "/robots.txt": text("text/plain", ""),
      "/long": text(
        "text/html",
        `<html><body><article><h1>Long</h1>${paragraphs}</article></body></html>`,
      ),
    });
    try {
      const evidence = await world.fetched(`http://127.0.0.1:${long.port}/long`, {
        max_chars: 200_000,
      });
      const markdown = (evidence as { markdown: string }).markdown;
      assert.equal(evidence.truncated, true);
      assert.ok(markdown.includes("paragraph-0 "));
      assert.ok(!markdown.includes("paragraph-1199 "), "the markup past the cut was not read");
      assert.ok(markdown.length < 200_000, "the cut was the markup's, not max_chars'");
    } finally {
      await long.close();
    }
  });
});
