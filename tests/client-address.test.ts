/**
 * The client address (src/http/client-address.ts): whom a request counts against. The peer's own
 * address unless it is a trusted proxy; then the rightmost X-Forwarded-For entry that is not one.
 * IPv6 by its /64, IPv4-mapped IPv6 as IPv4, and an unknown peer as one shared client.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { clientAddress, UNKNOWN_CLIENT } from "../src/http/client-address.ts";
import { addressRanges, readVariables } from "../src/config/env-values.ts";
import {
  hostKey,
  inRanges,
  parseAddress,
  parseCidr,
  parseHostAddress,
} from "../src/io/ip-rules.ts";
import { dottedIpv4 } from "../src/io/dotted-ipv4.ts";
import { CLIENT_IPV6_PREFIX_BITS } from "../src/protocol/admission-limits.ts";

const ranges = (list: string) =>
  readVariables({ TRACEFETCH_TRUSTED_PROXIES: list }, {
    TRACEFETCH_TRUSTED_PROXIES: addressRanges(parseCidr),
  }).TRACEFETCH_TRUSTED_PROXIES;
const within = (address: string, list: string) => inRanges(parseAddress(address)!, ranges(list));

describe("CIDR ranges", () => {
  it("an IPv4 range matches exactly the addresses under its prefix, on a bit boundary too", () => {
    assert.equal(within("10.127.255.255", "10.0.0.0/9"), true);
    assert.equal(within("10.128.0.0", "10.0.0.0/9"), false);
    assert.equal(within("192.0.2.7", "192.0.2.7"), true, "an address alone is a range of one");
    assert.equal(within("192.0.2.8", "192.0.2.7"), false);
    assert.equal(within("198.51.100.1", "0.0.0.0/0"), true);
  });

  it("an IPv6 range matches under its prefix; IPv4 and IPv6 ranges never cross families", () => {
    assert.equal(within("2001:db8:ffff::1", "2001:db8::/32"), true);
    assert.equal(within("2001:db9::1", "2001:db8::/32"), false);
    assert.equal(within("fd00::5", "fd00::/8, 10.0.0.0/8"), true);
    assert.equal(within("10.1.2.3", "fd00::/8"), false);
    assert.equal(within("::1", "127.0.0.0/8"), false);
  });

  it("an IPv4 range matches the IPv4-mapped IPv6 form of its addresses", () => {
    assert.equal(within("::ffff:10.1.2.3", "10.0.0.0/8"), true);
    assert.equal(within("::ffff:a01:203", "10.0.0.0/8"), true);
  });
});

describe("clientAddress", () => {
  it("without trusted proxies, X-Forwarded-For is ignored: a caller cannot name itself someone else", async () => {
    assert.equal(await clientAddress("203.0.113.5", "198.51.100.9", []), "203.0.113.5");
    assert.equal(await clientAddress("203.0.113.5", null, []), "203.0.113.5");
  });

  it("X-Forwarded-For from a peer that is not a trusted proxy is ignored", async () => {
    assert.equal(
      await clientAddress("203.0.113.5", "198.51.100.9", ranges("10.0.0.0/8")),
      "203.0.113.5",
    );
  });

  it("behind trusted proxies the client is the rightmost entry that is not one of them", async () => {
    const trusted = ranges("10.0.0.0/8, fd00::/8");
    // 198.51.100.9 was sent by the client itself: only what the proxies wrote counts.
    assert.equal(
      await clientAddress("10.0.0.1", "198.51.100.9, 203.0.113.5, 10.0.0.2", trusted),
      "203.0.113.5",
    );
    assert.equal(await clientAddress("fd00::1", "203.0.113.5,fd00::2", trusted), "203.0.113.5");
    assert.equal(
      await clientAddress("10.0.0.1", "10.0.0.3, 10.0.0.2", trusted),
      "10.0.0.3",
      "all trusted: the farthest",
    );
    assert.equal(await clientAddress("10.0.0.1", "", trusted), "10.0.0.1", "an empty header");
    assert.equal(
      await clientAddress("10.0.0.1", "203.0.113.5, unknown", trusted),
      "10.0.0.1",
      "an entry that is not an address: the proxy that wrote it",
    );
  });

  it("entries may carry a port, brackets or a zone, as proxies write them", async () => {
    const trusted = ranges("10.0.0.0/8");
    assert.equal(await clientAddress("10.0.0.1", "203.0.113.5:4711", trusted), "203.0.113.5");
    assert.equal(
      await clientAddress("10.0.0.1", "[2001:db8:1:2::7]:443", trusted),
      "2001:db8:1:2::/64",
    );
    assert.equal(await clientAddress("fe80::1%eth0", null, []), "fe80:0:0:0::/64");
  });

  it("IPv6 counts by its /64: addresses in one /64 are one client, the next /64 another", async () => {
    const a = await clientAddress("2001:db8:1:2:aaaa::1", null, []);
    assert.equal(a, "2001:db8:1:2::/64");
    assert.equal(await clientAddress("2001:db8:1:2:ffff:ffff:ffff:ffff", null, []), a);
    assert.equal(await clientAddress("2001:db8:1:3::1", null, []), "2001:db8:1:3::/64");
    assert.equal(await clientAddress("2001:0DB8:0:0:1::", null, []), "2001:db8:0:0::/64");
  });

  it("an IPv4-mapped IPv6 address counts as its IPv4", async () => {
    assert.equal(await clientAddress("::ffff:192.0.2.7", null, []), "192.0.2.7");
    assert.equal(await clientAddress("::ffff:c000:207", null, []), "192.0.2.7");
    assert.equal(
      await clientAddress("::ffff:10.0.0.1", "203.0.113.5", ranges("10.0.0.0/8")),
      "203.0.113.5",
      "a mapped peer is trusted by its IPv4 range",
    );
  });

  it("an unknown or unreadable peer is one shared client, whatever X-Forwarded-For says", async () => {
    assert.equal(await clientAddress(null, "203.0.113.5", ranges("0.0.0.0/0")), UNKNOWN_CLIENT);
    assert.equal(await clientAddress("not an address", null, []), UNKNOWN_CLIENT);
  });
});

/** What the full rules name a peer with nothing to follow: ip-rules' parseHostAddress, hostKey. */
const byFullRules = (written: string) => {
  const address = parseHostAddress(written);
  return address === null ? null : hostKey(address, CLIENT_IPV6_PREFIX_BITS);
};

describe("a dotted IPv4 peer, named without ipaddr.js", () => {
  it("names every strict dotted IPv4 address, with or without a port, as the full rules do", () => {
    fc.assert(
      fc.property(
        fc.ipV4(),
        fc.option(fc.integer({ min: 0, max: 65_535 })),
        (address, port) => {
          const written = port === null ? address : `${address}:${port}`;
          assert.equal(dottedIpv4(written), address);
          assert.equal(byFullRules(written), address);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("answers null for every other form, and never differs from the full rules when it answers", () => {
    for (
      const written of [
        "010.0.0.1",
        "10.0.0.256",
        "10.0.0",
        "10.0.0.1.5",
        "0x7f.0.0.1",
        "127.1",
        "[192.0.2.7]:443",
        "192.0.2.7%eth0",
        "::ffff:192.0.2.7",
        "2001:db8::1",
        "192.0.2.7:",
        "not an address",
        "",
      ]
    ) assert.equal(dottedIpv4(written), null, JSON.stringify(written));
    const near = fc.stringMatching(/^[\d.:\[\]% a-f]{0,24}$/);
    fc.assert(
      fc.property(fc.oneof(near, fc.ipV4Extended(), fc.ipV6()), (written) => {
        const plain = dottedIpv4(written);
        if (plain !== null) assert.equal(plain, byFullRules(written), JSON.stringify(written));
      }),
      { numRuns: 2_000 },
    );
    assert.equal(dottedIpv4(" 192.0.2.7 "), byFullRules(" 192.0.2.7 "), "surrounding space");
  });
});
