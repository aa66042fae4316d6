/**
 * The one maker of HMACs (src/io/digests.ts, docs/security.md): every purpose labels its input
 * (`<purpose>\0<value>`), so no two purposes share a digest; Web Crypto and a runtime's port give the
 * same bytes; and no other file of src/ computes an HMAC, the Node and Deno roots' node:crypto port
 * aside, which only ever receives the input digests.ts labelled.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { type HmacPort, type HmacPurpose, keyedHmac } from "../src/io/digests.ts";

const SECRET = "a test secret of at least 32 bytes!";
const SRC = fileURLToPath(new URL("../src/", import.meta.url));

/** Every purpose, checked complete against HmacPurpose by the compiler. */
const PURPOSES = Object.keys(
  {
    flight: true,
    answer: true,
    caller: true,
    query: true,
    sub: true,
    locator: true,
  } satisfies Record<HmacPurpose, true>,
) as HmacPurpose[];

/** Values a digest is made of: an identity's JSON, a `sub`, a URL, the empty text, a NUL. */
const VALUES = ['{"q":"tides"}', "sub:alice", "https://intranet.example/a?b=1", "", "a\0b", "é"];

const nodePort: HmacPort = (key, message) => createHmac("sha256", key).update(message).digest();

/** The HMAC of `<purpose>\0<value>`, computed here with node:crypto. */
const expected = (purpose: string, value: string, encoding: "hex" | "base64url") =>
  createHmac("sha256", SECRET).update(`${purpose}\0${value}`).digest(encoding);

/** What makes an HMAC in TypeScript: node:crypto's, Web Crypto's, a JWT signed with HS*. */
const HMAC_MAKERS = /createHmac|subtle\.sign\(|["']HMAC["']|alg: ["']HS\d/;

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(entries.map((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return Promise.resolve(entry.name.endsWith(".ts") ? [path] : []);
  }));
  return nested.flat();
}

describe("one maker of HMACs, each purpose labelled", () => {
  it("is the HMAC-SHA-256 of `<purpose>\\0<value>`, in hex and base64url, by Web Crypto and through a port", async () => {
    for (const encoding of ["hex", "base64url"] as const) {
      const web = keyedHmac(SECRET, encoding);
      const ported = keyedHmac(SECRET, encoding, nodePort);
      for (const purpose of PURPOSES) {
        for (const value of VALUES) {
          const want = expected(purpose, value, encoding);
          assert.equal(await web(purpose, value), want, `${purpose} ${JSON.stringify(value)}`);
          assert.equal(ported(purpose, value), want, `port: ${purpose} ${JSON.stringify(value)}`);
        }
      }
    }
  });

  it("gives each purpose its own digest of one value", async () => {
    const mac = keyedHmac(SECRET, "hex");
    for (const value of VALUES) {
      const digests = await Promise.all(PURPOSES.map((purpose) => mac(purpose, value)));
      assert.equal(new Set(digests).size, PURPOSES.length, JSON.stringify(value));
      assert.ok(!digests.includes(createHmac("sha256", SECRET).update(value).digest("hex")));
    }
  });

  it("is the only file of src/ that makes one; the roots' node:crypto port is handed to it", async () => {
    const makers: string[] = [];
    for (const file of await sourceFiles(SRC)) {
      if (HMAC_MAKERS.test(await readFile(file, "utf8"))) {
        makers.push(relative(SRC, file).replaceAll("\\", "/"));
      }
    }
    assert.deepEqual(makers.sort(), ["io/digests.ts", "runtime/launch.ts"]);
    // The root's HMAC is a port of keyedHmac's, passed where a guard or a cache takes `mac`, and
    // never called by the root itself.
    const launch = await readFile(join(SRC, "runtime/launch.ts"), "utf8");
    const uses = [...launch.matchAll(/\bnodeHmac\b/g)].length;
    const handed = [...launch.matchAll(/\bmac: nodeHmac\b/g)].length;
    assert.equal(uses - handed, 1, "nodeHmac is declared once and otherwise only handed on");
  });
});
