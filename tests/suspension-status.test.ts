/**
 * What `tracefetch status` and `tracefetch doctor` say of a provider the gateway suspended
 * (docs/protocol.md, "Suspension"), against a gateway reached in process.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { type gateway, search } from "./support/gateway.ts";
import { clock, provider, shownAs, withApp } from "./support/suspension-fixture.ts";
import type { CliContext } from "../src/cli/cli-context.ts";
import { doctorCommand } from "../src/cli/doctor-command.ts";
import { NO_PAINT } from "../src/cli/paint.ts";
import { statusCommand } from "../src/cli/status-command.ts";
import { readSettings } from "../src/config/settings.ts";

describe("suspension in the CLI", () => {
  it("tracefetch status and doctor name a suspended provider with its end and its failures", async () => {
    const p = await provider("alpha");
    const c = clock();
    const app = withApp([
      { name: "alpha", endpoint: p.server.url },
      { name: "beta", endpoint: p.server.url, scope: "other" },
    ], c);
    try {
      p.mode = { kind: "fail", status: 500 };
      for (let i = 0; i < 5; i++) await search(app, { providers: "alpha" });
      const shown = await shownAs(app, "alpha", "suspended");
      const ctx = cliContext(app);
      const statusReply = await statusCommand(["--gateway", "http://127.0.0.1:9"], ctx);
      assert.equal(statusReply.kind, "envelope");
      if (statusReply.kind !== "envelope") return;
      const rendered = statusReply.render?.(NO_PAINT) ?? "";
      assert.match(
        rendered,
        new RegExp(`alpha +suspended +until ${shown.until}, after 6 consecutive failures`),
      );
      assert.match(rendered, /beta +ready\n/);

      const doctor = await doctorCommand(["--gateway", "http://127.0.0.1:9"], ctx);
      assert.equal(doctor.kind, "envelope");
      if (doctor.kind !== "envelope") return;
      const gatewayCheck = (doctor.envelope.result as { checks: Array<{ check: string }> }).checks
        .find((k) => k.check === "gateway") as { ok: boolean; message: string } | undefined;
      assert.equal(gatewayCheck?.ok, true);
      assert.match(
        gatewayCheck?.message ?? "",
        new RegExp(
          `1 of 2 providers ready; suspended: alpha until ${shown.until} \\(6 consecutive`,
        ),
      );
    } finally {
      await p.server.close();
    }
  });
});

/** A CLI context whose fetch reaches the gateway in process, with an empty configuration folder. */
function cliContext(app: ReturnType<typeof gateway>): CliContext {
  const never = () => {
    throw new Error("not used");
  };
  return {
    env: { XDG_CONFIG_HOME: "/nonexistent-tracefetch-test-config", NO_COLOR: "1" },
    // doctor checks the environment as a gateway would: this one, with nothing set.
    settings: (overrides = {}) => readSettings({ ...overrides }),
    machine: true,
    requestId: "test",
    stdin: never,
    writeStderr: () => {},
    stdinIsTTY: false,
    stderrIsTTY: false,
    stderrPaint: NO_PAINT,
    fetch: (input, init) => Promise.resolve(app.fetch(new Request(input, init))),
    confirm: () => Promise.resolve(false),
    interrupted: never,
    writeStdout: () => {},
  };
}
