import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { validateManifest } from "../src/protocol/mod.ts";
import { planSearch } from "../src/core/plan.ts";
import { fuse } from "../src/core/fusion.ts";
import { evidenceStateOf } from "../src/core/fan-out.ts";
import { type Caller, entitlement } from "../src/core/caller.ts";

const SCOPES = ["alpha", "beta", "gamma"];
const GRANTS = [
  "tracefetch:alpha",
  "tracefetch:beta",
  "tracefetch:gamma",
  "tracefetch:*",
  "other:thing",
];

const providerArb = fc.record({
  scope: fc.constantFrom(...SCOPES),
  sensitivity: fc.constantFrom("public", "account-visible", "internal"),
  isolated: fc.boolean(),
  disabled: fc.boolean(),
  cost: fc.constantFrom(0, 5_000, 15_000),
});

const caseArb = fc.record({
  providers: fc.array(providerArb, { minLength: 1, maxLength: 8 }),
  caller: fc.option(fc.subarray(GRANTS), { nil: null }),
  scope: fc.option(fc.constantFrom("auto", "public", "local", ...SCOPES, "nowhere"), { nil: null }),
  named: fc.option(
    fc.subarray(["p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "ghost"], { minLength: 1 }),
    { nil: null },
  ),
  tier: fc.constantFrom(null, "cheap"),
});

describe("property: isolation and visibility hold for any manifest and request", () => {
  it("never merges an isolated provider with another, never shows a sensitive provider to an unentitled caller", () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const raw = {
          schema_version: "tracefetch.providers.v1",
          providers: c.providers.map((p, i) => ({
            name: `p${i}`,
            scope: p.scope,
            endpoint: `https://p${i}.example/search`,
            sensitivity: p.sensitivity,
            isolated: p.sensitivity === "internal" ? true : p.isolated,
            timeout_seconds: p.disabled ? 0 : 5,
            cost_micros: p.cost,
          })),
          tiers: { cheap: { cost_ceiling_micros: 10_000 } },
        };
        const parsed = validateManifest(raw, { allowLoopback: false });
        assert.ok(parsed.ok, JSON.stringify(parsed));
        const caller: Caller = c.caller === null
          ? { kind: "anonymous" }
          : { kind: "token", subject: "s", scopes: new Set(c.caller) };
        const granted = (name: string) => {
          const spec = parsed.manifest.providers.find((p) => p.name === name);
          return spec !== undefined && entitlement(caller, spec) === "granted";
        };
        const planned = planSearch({
          query: "q",
          scope: c.scope,
          providers: c.named,
          limit: 8,
          tier: c.tier,
          view: "full",
          timeout_ms: 10_000,
        }, {
          manifest: parsed.manifest,
          maxProviders: 32,
          entitlement: (spec) => entitlement(caller, spec),
          unavailable: () => null,
        });
        if (!planned.ok) {
          // A refusal names a sensitive provider only to say access is needed: never its content.
          return;
        }
        const { run, decision } = planned.plan;
        const mentioned = [
          ...decision.providers,
          ...decision.trimmed.map((t) => t.provider),
          ...decision.skipped.map((s) => s.provider),
        ];
        for (const name of mentioned) {
          assert.ok(granted(name), `${name} shown to a caller not entitled to it`);
        }
        if (run.some((p) => p.isolated)) {
          assert.equal(run.length, 1, "an isolated provider ran with others");
        }
        // Every planned provider answers the same page: fusion must still keep isolation.
        const merged = fuse(
          run.map((spec, index) => ({
            index,
            attempt: {
              provider: spec.name,
              scope: spec.scope,
              source_class: spec.source_class,
              sensitivity: spec.sensitivity,
              candidates: [{
                title: "t",
                locator: "https://same.example/",
                snippet: "",
                published_at: null,
                metadata: {},
                truncated: [],
              }],
            },
            evidence_state: evidenceStateOf(spec),
            weight: spec.weight,
          })),
          8,
        );
        for (const entry of merged) {
          const isolatedThere = entry.found_by.some((name) =>
            run.find((p) => p.name === name)?.isolated
          );
          if (isolatedThere) assert.equal(entry.found_by.length, 1);
          for (const name of entry.found_by) assert.ok(granted(name));
        }
      }),
      { numRuns: 10_000, seed: 20261130 },
    );
  });
});
