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
    "loop.test": { a: ["127.0.0.2"] },
    "private.test": { a: ["10.0.0.1"] },
    "metadata.test": { a: ["169.254.169.254"] },
    "v6loop.test": { aaaa: ["::1"] },
    "mapped.test": { aaaa: ["::ffff:127.0.0.2"] },
    "nat64.test": { aaaa: ["64:ff9b::7f00:2"] },
    "linklocal.test": { aaaa: ["fe80::1"] },
    "mixed.test": { a: ["93.184.216.34", "127.0.0.2"] },
    "mixed6.test": { a: ["93.184.216.34"], aaaa: ["::1"] },
    "cgnat.test": { a: ["100.64.0.1"] },
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

/** Forms written straight into the URL, with the policy that opens no range. */
const direct: Array<[string, () => string]> = [
  ["127.0.0.1", () => `http://127.0.0.1:${F}/`],
  ["decimal 127.0.0.1", () => `http://2130706433:${F}/`],
  ["octal 127.0.0.1", () => `http://0177.0.0.1:${F}/`],
  ["hex 127.0.0.1 in parts", () => `http://0x7f.0.0.1:${F}/`],
  ["hex 127.0.0.1 whole", () => `http://0x7f000001:${F}/`],
  ["short 127.1", () => `http://127.1:${F}/`],
  ["short 127.0.1", () => `http://127.0.1:${F}/`],
  ["octal and short 0177.1", () => `http://0177.1:${F}/`],
  ["percent-encoded 127.0.0.1", () => `http://%31%32%37.0.0.1:${F}/`],
  ["fullwidth digits", () => `http://\uff11\uff12\uff17.0.0.1:${F}/`],
  ["ideographic full stops", () => `http://127\u30020\u30020\u30021:${F}/`],
  ["a trailing dot", () => `http://127.0.0.1.:${F}/`],
  ["127.0.0.2", () => `http://127.0.0.2:${F}/`],
  ["the top of 127/8", () => `http://127.255.255.254:${F}/`],
  ["IPv6 loopback", () => `http://[::1]:${F}/`],
  ["IPv6 loopback written long", () => `http://[0:0:0:0:0:0:0:1]:${F}/`],
  ["IPv6 unspecified", () => `http://[::]:${F}/`],
  ["IPv4-mapped 127.0.0.1", () => `http://[::ffff:127.0.0.1]:${F}/`],
  ["IPv4-mapped in hex", () => `http://[::ffff:7f00:1]:${F}/`],
  ["IPv4-compatible 127.0.0.1", () => `http://[::127.0.0.1]:${F}/`],
  ["NAT64 of 127.0.0.1", () => `http://[64:ff9b::127.0.0.1]:${F}/`],
  ["6to4 of 127.0.0.1", () => `http://[2002:7f00:1::1]:${F}/`],
  ["0.0.0.0", () => `http://0.0.0.0:${F}/`],
  ["0", () => `http://0:${F}/`],
  ["localhost", () => `http://localhost:${F}/`],
  ["LOCALHOST", () => `http://LOCALHOST:${F}/`],
  ["localhost with a trailing dot", () => `http://localhost.:${F}/`],
  ["a subdomain of localhost", () => `http://a.localhost:${F}/`],
  ["a deep subdomain of localhost", () => `http://deep.sub.localhost:${F}/`],
  ["credentials before 127.0.0.1", () => `http://example.com@127.0.0.1:${F}/`],
  ["credentials with a password", () => `http://user:secret@127.0.0.1:${F}/`],
  ["https to 127.0.0.1", () => `https://127.0.0.1:${F}/`],
  ["10.0.0.1", () => "http://10.0.0.1/"],
  ["172.16.0.1", () => "http://172.16.0.1/"],
  ["192.168.1.1", () => "http://192.168.1.1/"],
  ["the metadata address", () => "http://169.254.169.254/latest/meta-data/"],
  ["the metadata address in decimal", () => "http://2852039166/"],
  ["the metadata address in octal", () => "http://0251.0376.0251.0376/"],
  ["the metadata address IPv4-mapped", () => "http://[::ffff:169.254.169.254]/"],
  ["the metadata address through NAT64", () => "http://[64:ff9b::a9fe:a9fe]/"],
  ["AWS's IPv6 metadata address", () => "http://[fd00:ec2::254]/"],
  ["carrier-grade NAT (Alibaba's metadata)", () => "http://100.100.100.200/"],
  ["IPv6 link-local", () => "http://[fe80::1]/"],
  ["IPv6 unique local", () => "http://[fc00::1]/"],
  ["multicast", () => "http://224.0.0.1/"],
  ["broadcast", () => "http://255.255.255.255/"],
  ["documentation TEST-NET-1", () => "http://192.0.2.1/"],
  ["benchmarking 198.18/15", () => "http://198.18.0.1/"],
  ["IPv6 documentation", () => "http://[2001:db8::1]/"],
  ["reserved 240/4", () => "http://240.0.0.1/"],
  ["file:", () => "file:///etc/passwd"],
  ["ftp:", () => `ftp://127.0.0.1:${F}/`],
  ["gopher:", () => `gopher://127.0.0.1:${F}/_GET%20/`],
  ["ws:", () => `ws://127.0.0.1:${F}/`],
  ["data:", () => "data:text/html,<h1>hi</h1>"],
  ["javascript:", () => "javascript:alert(1)"],
  ["a name resolving to 127.0.0.2", () => `http://loop.test:${F}/`],
  ["a name resolving to 10.0.0.1", () => "http://private.test/"],
  ["a name resolving to the metadata address", () => "http://metadata.test/"],
  ["a name resolving to ::1", () => `http://v6loop.test:${F}/`],
  ["a name resolving to an IPv4-mapped 127.0.0.2", () => `http://mapped.test:${F}/`],
  ["a name resolving to NAT64 of 127.0.0.2", () => `http://nat64.test:${F}/`],
  ["a name resolving to link-local IPv6", () => "http://linklocal.test/"],
  ["a name resolving to carrier-grade NAT", () => "http://cgnat.test/"],
  ["a mixed public and 127.0.0.2 answer", () => `http://mixed.test:${F}/`],
  ["a mixed public A and ::1 AAAA answer", () => `http://mixed6.test:${F}/`],
];

describe("URL forms aimed at forbidden addresses", () => {
  it(`counts at least 45 direct forms and ${redirects.length} redirects`, () => {
    assert.ok(direct.length >= 45, `${direct.length} direct forms`);
  });

  for (const [name, url] of direct) {
    it(`refuses ${name}`, async () => {
      const { deps, guard } = fetchDeps(dns.server);
      const outcome = await fetchEvidence(request(url()), closed, deps);
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
