/**
 * URL forms aimed at loopback, private, link-local, reserved and metadata addresses, written the
 * ways the URL parser accepts, by redirects from an allowed site, and by names the test DNS server
 * resolves: every one is refused, and the listeners on the forbidden addresses count 0 requests.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { fetchEvidence, type FetchPolicy } from "../src/evidence/mod.ts";
import {
  fetchDeps,
  forbiddenListeners,
  listen,
  type Listener,
  policy,
  request,
  type Route,
  startDns,
} from "./support/fetch-fixture.ts";
import { directForms, FORBIDDEN_ZONE } from "./support/url-forms.ts";

type Forbidden = Awaited<ReturnType<typeof forbiddenListeners>>;

let site: Listener;
/** 127.0.0.1 on its own port: forbidden when the policy opens no range. */
let local: Listener;
let forbiddenOnSite: Forbidden;
let forbidden: Forbidden;
let dns: Awaited<ReturnType<typeof startDns>>;
let F: number;
let S: number;

/** Opens the site's address, 127.0.0.1, and nothing else. */
const siteOnly: FetchPolicy = policy({ allow_private_cidrs: ["127.0.0.1/32"] });
const closed: FetchPolicy = policy();

/** Redirects the site answers: path to [status, Location]. */
const redirects: Array<[string, number, () => string, string]> = [
  ["/r301", 301, () => `http://127.0.0.2:${F}/`, "301 to 127.0.0.2"],
  ["/r302", 302, () => `http://2130706434:${F}/`, "302 to a decimal 127.0.0.2"],
  ["/r303", 303, () => `http://[::1]:${F}/`, "303 to [::1]"],
  ["/r307", 307, () => `http://localhost:${F}/`, "307 to localhost"],
  ["/r308", 308, () => `http://0x7f.2:${F}/`, "308 to a hex and short 127.0.0.2"],
  ["/proto", 302, () => `//127.0.0.2:${F}/`, "a protocol-relative Location to 127.0.0.2"],
  [
    "/proto6",
    301,
    () => `//[::1]:${S}/`,
    "a protocol-relative Location to [::1] on the site's port",
  ],
  ["/same-port", 302, () => `http://127.0.0.2:${S}/`, "302 to 127.0.0.2 on the site's port"],
  ["/name", 302, () => `http://loop.test:${F}/`, "302 to a name resolving to 127.0.0.2"],
  ["/meta", 307, () => "http://169.254.169.254/latest/meta-data/", "307 to the metadata address"],
  ["/file", 302, () => "file:///etc/passwd", "302 to file:"],
  ["/gopher", 302, () => `gopher://127.0.0.1:${S}/_x`, "302 to gopher:"],
  ["/creds", 307, () => `http://user:pw@127.0.0.1:${S}/ok`, "307 to a URL with credentials"],
  ["/octal", 308, () => `http://0177.0.0.2:${F}/`, "308 to an octal 127.0.0.2"],
  ["/mapped", 301, () => `http://[::ffff:127.0.0.2]:${F}/`, "301 to an IPv4-mapped 127.0.0.2"],
];

before(async () => {
  const routes: Record<string, Route> = {
    "/robots.txt": (_req, res) => {
      res.writeHead(404);
      res.end();
    },
    "/loop-a": (_req, res) => {
      res.writeHead(302, { location: "/loop-b" });
      res.end();
    },
    "/loop-b": (_req, res) => {
      res.writeHead(302, { location: "/loop-a" });
      res.end();
    },
    "/ok": (_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("fine");
    },
  };
  for (const [path, status, location] of redirects) {
    routes[path] = (_req, res) => {
      res.writeHead(status, { location: location() });
      res.end();
    };
  }
  for (let hop = 0; hop < 7; hop++) {
    routes[`/chain/${hop}`] = (_req, res) => {
      res.writeHead(302, { location: `/chain/${hop + 1}` });
      res.end();
    };
  }
  site = await listen("127.0.0.1", 0, routes);
  S = site.port;
  local = await listen("127.0.0.1", 0);
  F = local.port;
  forbiddenOnSite = await forbiddenListeners(S);
  forbidden = await forbiddenListeners(F);
  let asked = 0;
  dns = await startDns({
    ...FORBIDDEN_ZONE,
    // The first answer is the site's address, every later one 127.0.0.2.
    "rebind.test": () => ({ a: [asked++ < 1 ? "127.0.0.1" : "127.0.0.2"] }),
  });
});

after(async () => {
  await Promise.all([
    site.close(),
    local.close(),
    forbiddenOnSite.close(),
    forbidden.close(),
    dns.close(),
  ]);
});

describe("URL forms aimed at forbidden addresses", () => {
  it(`counts at least 45 direct forms and ${redirects.length} redirects`, () => {
    assert.ok(directForms.length >= 45, `${directForms.length} direct forms`);
  });

  for (const [name, url] of directForms) {
    it(`refuses ${name}`, async () => {
      const { deps, guard } = fetchDeps(dns.server);
      const outcome = await fetchEvidence(request(url(F)), closed, deps);
      assert.equal(outcome.outcome, "refused", JSON.stringify(outcome));
      assert.equal(outcome.outcome === "refused" && outcome.code, "url_forbidden");
      assert.deepEqual(guard.sent, [], "nothing was sent");
      assert.deepEqual(guard.offLoopback, []);
    });
  }

  for (const [path, _status, _location, name] of redirects) {
    it(`refuses ${name} from an allowed site`, async () => {
      const { deps, guard } = fetchDeps(dns.server);
      const outcome = await fetchEvidence(request(`http://127.0.0.1:${S}${path}`), siteOnly, deps);
      assert.equal(
        outcome.outcome === "refused" && outcome.code,
        "url_forbidden",
        JSON.stringify(outcome),
      );
      assert.match((outcome as { message: string }).message, /a redirect \(\d{3}\) is refused/);
      assert.deepEqual(guard.offLoopback, []);
      // The site alone was asked: its robots.txt, then the redirecting path.
      assert.ok(guard.sent.every((line) => line.startsWith("127.0.0.1 ")), guard.sent.join());
    });
  }

  it("refuses a redirect loop", async () => {
    const { deps } = fetchDeps(dns.server);
    const outcome = await fetchEvidence(request(`http://127.0.0.1:${S}/loop-a`), siteOnly, deps);
    assert.equal(outcome.outcome === "refused" && outcome.code, "too_many_redirects");
    assert.match((outcome as { message: string }).message, /loop/);
  });

  it("refuses a sixth redirect", async () => {
    const { deps, guard } = fetchDeps(dns.server);
    const outcome = await fetchEvidence(request(`http://127.0.0.1:${S}/chain/0`), siteOnly, deps);
    assert.equal(outcome.outcome === "refused" && outcome.code, "too_many_redirects");
    const asked = guard.sent.filter((line) => line.includes("/chain/"));
    assert.equal(asked.length, 6, "the first request and 5 redirects");
  });

  it("refuses a rebinding name: the second answer is judged again, and nothing reaches 127.0.0.2", async () => {
    const { deps } = fetchDeps(dns.server);
    const outcome = await fetchEvidence(request(`http://rebind.test:${S}/ok`), siteOnly, deps);
    // robots.txt was asked of the first answer (127.0.0.1); the page's own resolution said 127.0.0.2.
    assert.equal(
      outcome.outcome === "refused" && outcome.code,
      "url_forbidden",
      JSON.stringify(outcome),
    );
  });

  it("let no request reach a forbidden listener", () => {
    assert.equal(forbidden.count(), 0);
    assert.equal(forbiddenOnSite.count(), 0);
    assert.equal(local.requests.length, 0);
    assert.ok(forbidden.hosts.includes("127.0.0.2"));
  });
});
