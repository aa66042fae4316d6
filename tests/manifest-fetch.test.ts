/**
 * The manifest's `fetch` block: its presence turns fetching on, its ranges are read by ip-rules'
 * parseCidr, its domains are lowercase names, and every problem names its field.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseCidr } from "../src/io/ip-rules.ts";
import { validateManifest } from "../src/protocol/validate-manifest.ts";
import { fetchPolicyOf } from "../src/evidence/mod.ts";
import { startEmbeddedDefault } from "../providers/corpus/embedded-default.ts";
import { listen as kitListen } from "../src/kit/node/mod.ts";
import { checkManifestText } from "../src/cli/read-manifest-file.ts";
import { readSettings } from "../src/config/settings.ts";
import { ConfigError } from "../src/protocol/config-error.ts";

const manifest = (fetch: unknown) => ({
  schema_version: "tracefetch.providers.v1",
  providers: [],
  ...(fetch === undefined ? {} : { fetch }),
});
const check = (fetch: unknown) =>
  validateManifest(manifest(fetch), { allowLoopback: false, parseCidr });
const fields = (fetch: unknown) => {
  const result = check(fetch);
  return result.ok ? [] : result.issues.map((issue) => `${issue.field}: ${issue.message}`);
};

describe("manifest: the fetch block", () => {
  it("turns fetching on when present, even empty, and leaves it off when absent", () => {
    const on = check({});
    assert.ok(on.ok);
    assert.deepEqual(on.manifest.fetch, {
      allow_private_cidrs: [],
      deny_domains: [],
      allow_domains: [],
    });
    const off = check(undefined);
    assert.ok(off.ok && off.manifest.fetch === undefined);
    assert.equal(fetchPolicyOf(undefined), null);
  });

  it("reads ranges and single addresses, IPv4 and IPv6, into the policy", () => {
    const result = check({
      allow_private_cidrs: ["10.1.0.0/16", "fd00::/8", "192.168.1.7"],
      deny_domains: ["ads.example.com"],
      allow_domains: ["example.com", "xn--bcher-kva.example"],
    });
    assert.ok(result.ok, JSON.stringify(result));
    const policy = fetchPolicyOf(result.manifest.fetch);
    assert.deepEqual(policy?.allowPrivate.map((r) => r.bits), [16, 8, 32]);
    assert.deepEqual(policy?.denyDomains, ["ads.example.com"]);
  });

  it("refuses a range parseCidr cannot read, naming the entry", () => {
    for (
      const bad of [
        "10.1.0.0/33",
        "010.1.0.0/16",
        "0x0a.1.0.0/16",
        "10.1/16",
        "fd00::/129",
        "example.com",
        "",
      ]
    ) {
      const [issue] = fields({ allow_private_cidrs: ["10.0.0.0/8", bad] });
      assert.match(issue ?? "", /^fetch\.allow_private_cidrs\.1: must be a CIDR range/, bad);
    }
  });

  it("refuses ranges when the reader of the manifest cannot check them", () => {
    const result = validateManifest(manifest({ allow_private_cidrs: ["10.0.0.0/8"] }), {
      allowLoopback: false,
    });
    assert.ok(!result.ok);
    assert.equal(result.issues[0]?.field, "fetch.allow_private_cidrs.0");
  });

  it("refuses a domain that is not a lowercase name, naming the entry", () => {
    for (
      const bad of [
        "Example.com",
        "https://example.com",
        "example.com:443",
        "example.com/x",
        "-x.com",
        "*.example.com",
        "bücher.example",
      ]
    ) {
      const [issue] = fields({ deny_domains: [bad] });
      assert.match(issue ?? "", /^fetch\.deny_domains\.0: must be a lowercase domain name/, bad);
    }
    assert.match(fields({ allow_domains: ["a..b"] })[0] ?? "", /^fetch\.allow_domains\.0: /);
  });

  it("refuses unknown fields in the block, with the likely one", () => {
    assert.deepEqual(fields({ allow_private_cidr: ["10.0.0.0/8"] }), [
      'fetch.allow_private_cidr: is not a known field; did you mean "allow_private_cidrs"?',
    ]);
    assert.match(fields("yes")[0] ?? "", /^fetch: /);
  });

  it("is declared by the embedded default, with no private range", async () => {
    const running = await startEmbeddedDefault(kitListen);
    try {
      const result = validateManifest(running.manifest, { allowLoopback: true, parseCidr });
      assert.ok(result.ok);
      assert.deepEqual(result.manifest.fetch?.allow_private_cidrs, []);
    } finally {
      await running.close();
    }
  });

  it("is checked the same way by the gateway's start and by tracefetch validate", () => {
    const text = JSON.stringify(manifest({ allow_private_cidrs: ["10.0.0.0/8", "10.0.0.0/40"] }));
    const checked = checkManifestText(text, false);
    assert.ok(!checked.ok);
    assert.equal(checked.issues[0]?.field, "fetch.allow_private_cidrs.1");
    assert.throws(
      () => readSettings({}, { parseCidr }).withManifest({ text }),
      (error) =>
        error instanceof ConfigError &&
        /fetch\.allow_private_cidrs\.1: must be a CIDR/.test(error.message),
    );
    const fine = readSettings({}, { parseCidr }).withManifest({
      text: JSON.stringify(manifest({ allow_private_cidrs: ["10.0.0.0/8"] })),
    });
    assert.deepEqual(fine.manifest.fetch?.allow_private_cidrs, ["10.0.0.0/8"]);
  });
});
