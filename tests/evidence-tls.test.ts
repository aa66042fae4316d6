/**
 * A pinned HTTPS fetch: the connection goes to the checked address, while SNI and the certificate
 * check use the URL's host name. A certificate made here with openssl names `site.test` only.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TLSSocket } from "node:tls";
import {
  createRobotsCache,
  type Evidence,
  fetchEvidence,
  fetchUserAgent,
} from "../src/evidence/mod.ts";
import { nodeFetchParts } from "../src/runtime/node-evidence.ts";
import { policy, request, startDns } from "./support/fetch-fixture.ts";

/** A self-signed certificate for `site.test`, or null when openssl is not installed. */
function certificate(): { key: string; cert: string } | null {
  const dir = mkdtempSync(join(tmpdir(), "tracefetch-tls-"));
  try {
    execFileSync("openssl", [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-days",
      "1",
      "-subj",
      "/CN=site.test",
      "-addext",
      "subjectAltName=DNS:site.test",
      "-keyout",
      join(dir, "key.pem"),
      "-out",
      join(dir, "cert.pem"),
    ], { stdio: "ignore" });
    return {
      key: readFileSync(join(dir, "key.pem"), "utf8"),
      cert: readFileSync(join(dir, "cert.pem"), "utf8"),
    };
  } catch {
    return null;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const pem = certificate();

describe(
  "a pinned HTTPS fetch",
  { skip: pem === null ? "openssl is not installed" : false },
  () => {
    let server: Server;
    let port: number;
    let dns: Awaited<ReturnType<typeof startDns>>;
    const seen: Array<{ servername: string | false; host: string }> = [];
    const open = policy({ allow_private_cidrs: ["127.0.0.1/32"] });

    before(async () => {
      server = createServer({ key: pem!.key, cert: pem!.cert }, (req, res) => {
        seen.push({
          servername: (req.socket as TLSSocket & { servername?: string | false }).servername ??
            false,
          host: req.headers.host ?? "",
        });
        res.writeHead(req.url === "/robots.txt" ? 404 : 200, { "content-type": "text/plain" });
        res.end("over TLS\n");
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      port = (server.address() as AddressInfo).port;
      dns = await startDns({
        "site.test": { a: ["127.0.0.1"] },
        "other.test": { a: ["127.0.0.1"] },
      });
    });

    after(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await dns.close();
    });

    const deps = () => ({
      ...nodeFetchParts({ dnsServers: [dns.server], ca: [pem!.cert] }),
      now: () => Date.now(),
      signal: new AbortController().signal,
      robots: createRobotsCache(),
      userAgent: fetchUserAgent("0.0.0-test"),
    });

    it("sends the name as SNI and Host, and checks the certificate against it", async () => {
      const outcome = await fetchEvidence(request(`https://site.test:${port}/page`), open, deps());
      assert.equal(outcome.outcome, "fetched", JSON.stringify(outcome));
      assert.equal(
        (outcome as { evidence: Evidence }).evidence.final_url,
        `https://site.test:${port}/page`,
      );
      assert.deepEqual(seen.at(-1), { servername: "site.test", host: `site.test:${port}` });
    });

    it("fails TLS for a name the certificate does not name, though it resolves to the same address", async () => {
      const outcome = await fetchEvidence(request(`https://other.test:${port}/page`), open, deps());
      assert.equal(
        outcome.outcome === "failed" && outcome.reason,
        "tls_failure",
        JSON.stringify(outcome),
      );
    });

    it("fails TLS for the address itself", async () => {
      const outcome = await fetchEvidence(request(`https://127.0.0.1:${port}/page`), open, deps());
      assert.equal(
        outcome.outcome === "failed" && outcome.reason,
        "tls_failure",
        JSON.stringify(outcome),
      );
    });
  },
);
