/**
 * The client address (src/http/client-address.ts): whom a request counts against. The peer's own
 * address unless it is a trusted proxy; then the rightmost X-Forwarded-For entry that is not one.
 * IPv6 by its /64, IPv4-mapped IPv6 as IPv4, and an unknown peer as one shared client.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { clientAddress, UNKNOWN_CLIENT } from "../src/http/client-address.ts";
import { addressRanges, readVariables } from "../src/config/env-values.ts";
import { inRanges, parseAddress } from "../src/io/ip-rules.ts";

const ranges = (list: string) =>
  readVariables({ TRACEFETCH_TRUSTED_PROXIES: list }, { TRACEFETCH_TRUSTED_PROXIES: addressRanges })
    .TRACEFETCH_TRUSTED_PROXIES;
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
  it("without trusted proxies, X-Forwarded-For is ignored: a caller cannot name itself someone else", () => {
    assert.equal(clientAddress("203.0.113.5", "198.51.100.9", []), "203.0.113.5");
    assert.equal(clientAddress("203.0.113.5", null, []), "203.0.113.5");
  });

  it("X-Forwarded-For from a peer that is not a trusted proxy is ignored", () => {
    assert.equal(
      clientAddress("203.0.113.5", "198.51.100.9", ranges("10.0.0.0/8")),
      "203.0.113.5",
    );
  });

  it("behind trusted proxies the client is the rightmost entry that is not one of them", () => {
    const trusted = ranges("10.0.0.0/8, fd00::/8");
    // 198.51.100.9 was sent by the client itself: only what the proxies wrote counts.
    assert.equal(
      clientAddress("10.0.0.1", "198.51.100.9, 203.0.113.5, 10.0.0.2", trusted),
      "203.0.113.5",
    );
    assert.equal(clientAddress("fd00::1", "203.0.113.5,fd00::2", trusted), "203.0.113.5");
    assert.equal(
      clientAddress("10.0.0.1", "10.0.0.3, 10.0.0.2", trusted),
      "10.0.0.3",
      "all trusted: the farthest",
    );
    assert.equal(clientAddress("10.0.0.1", "", trusted), "10.0.0.1", "an empty header");
    assert.equal(
      clientAddress("10.0.0.1", "203.0.113.5, unknown", trusted),
      "10.0.0.1",
      "an entry that is not an address: the proxy that wrote it",
    );
  });

  it("entries may carry a port, brackets or a zone, as proxies write them", () => {
    const trusted = ranges("10.0.0.0/8");
    assert.equal(clientAddress("10.0.0.1", "203.0.113.5:4711", trusted), "203.0.113.5");
    assert.equal(
      clientAddress("10.0.0.1", "[2001:db8:1:2::7]:443", trusted),
      "2001:db8:1:2::/64",
    );
    assert.equal(clientAddress("fe80::1%eth0", null, []), "fe80:0:0:0::/64");
  });

  it("IPv6 counts by its /64: addresses in one /64 are one client, the next /64 another", () => {
    const a = clientAddress("2001:db8:1:2:aaaa::1", null, []);
    assert.equal(a, "2001:db8:1:2::/64");
    assert.equal(clientAddress("2001:db8:1:2:ffff:ffff:ffff:ffff", null, []), a);
    assert.equal(clientAddress("2001:db8:1:3::1", null, []), "2001:db8:1:3::/64");
    assert.equal(clientAddress("2001:0DB8:0:0:1::", null, []), "2001:db8:0:0::/64");
  });

  it("an IPv4-mapped IPv6 address counts as its IPv4", () => {
    assert.equal(clientAddress("::ffff:192.0.2.7", null, []), "192.0.2.7");
    assert.equal(clientAddress("::ffff:c000:207", null, []), "192.0.2.7");
    assert.equal(
      clientAddress("::ffff:10.0.0.1", "203.0.113.5", ranges("10.0.0.0/8")),
      "203.0.113.5",
      "a mapped peer is trusted by its IPv4 range",
    );
  });

  it("an unknown or unreadable peer is one shared client, whatever X-Forwarded-For says", () => {
    assert.equal(clientAddress(null, "203.0.113.5", ranges("0.0.0.0/0")), UNKNOWN_CLIENT);
    assert.equal(clientAddress("not an address", null, []), UNKNOWN_CLIENT);
  });
});
