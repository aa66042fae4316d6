/**
 * Property: the provider-answer fuzz of tests/provider-fuzz.test.ts against the bundled worker in
 * workerd, whose provider client is workerd's own fetch; the fuzzed and the healthy provider run on
 * 127.0.0.1. Fewer runs than on Node: each search crosses into workerd and back.
 *
 * TRACEFETCH_FUZZ_RUNS and TRACEFETCH_FUZZ_SECONDS change how long it runs.
 */
import { after, before, describe, it } from "node:test";
import type { Miniflare } from "miniflare";
import { manifestOf } from "../support/gateway.ts";
import {
  fuzzProviderEntries,
  type FuzzProviders,
  fuzzSettings,
  runProviderFuzz,
  startFuzzProviders,
} from "../support/fuzz-provider.ts";
import { startWorker } from "./miniflare.ts";

describe("property in workerd: any provider answer leaves the worker, the caller and the other provider intact", () => {
  let providers: FuzzProviders;
  let mf: Miniflare;

  before(async () => {
    providers = await startFuzzProviders();
    mf = await startWorker({
      TRACEFETCH_ALLOW_LOOPBACK: "1",
      // One provider fails on purpose run after run: suspension would skip it and hide the answers.
      TRACEFETCH_SUSPEND_PROVIDERS: "off",
      TRACEFETCH_MANIFEST: JSON.stringify(manifestOf(fuzzProviderEntries(providers))),
    }, { quiet: true });
  });
  after(async () => {
    await mf?.dispose();
    await providers?.close();
  });

  it("every generated answer: a valid envelope, the healthy result merged, a documented outcome, every bound, no secret", async () => {
    await runProviderFuzz({
      runtime: "workerd",
      providers,
      settings: fuzzSettings({ runs: 1_000, seconds: 30, floor: 200 }),
      call: async (requestId, query) => {
        const res = await mf.dispatchFetch(`http://gateway.test/v1/search?${query}`, {
          headers: { "x-request-id": requestId },
        });
        return {
          status: res.status,
          headers: res.headers as unknown as Headers,
          text: await res.text(),
        };
      },
    });
  });
});
