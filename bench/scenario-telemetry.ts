/**
 * Scenario 9, what observing a search costs (docs/deploy.md, "Observing it"): the p50 of scenario
 * 6's search (4 zero-delay providers of 10 candidates) on a gateway with metrics kept and traces
 * exported to a loopback OTLP/HTTP receiver, beside the same search on a gateway with both off,
 * taking turns. It prints; it never fails on a number.
 */
import { startOtlpReceiver } from "../tests/support/otlp-receiver.ts";
import { interleaved } from "./http-client.ts";
import { type Row, verdict } from "./report.ts";
import { startGateway } from "./soak-gateway.ts";
import { ms, p50 } from "./stats.ts";
import { GROUPS, SCOPE, type Urls } from "./targets.ts";

/** The bar: observing a search adds at most 0.2 ms at p50. */
const OVERHEAD_TARGET_MS = 0.2;
/** Scenario 6's counts. */
const WARM = 50;
const COUNT = 500;

export async function telemetryOverhead(urls: Urls): Promise<Row[]> {
  const receiver = await startOtlpReceiver();
  const providers = GROUPS.zero4.map((name) => ({
    name,
    endpoint: urls[name] as string,
    scope: SCOPE,
    timeout_seconds: 10,
  }));
  const base = {
    HOST: "127.0.0.1",
    PORT: "0",
    TRACEFETCH_MANIFEST: JSON.stringify({ schema_version: "tracefetch.providers.v1", providers }),
    TRACEFETCH_ALLOW_LOOPBACK: "1",
    TRACEFETCH_API_DOCS: "0",
    TRACEFETCH_STATE_URL: "",
  };
  const [on, off] = await Promise.all([
    startGateway({
      ...base,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    }),
    startGateway({ ...base, TRACEFETCH_METRICS: "off", OTEL_EXPORTER_OTLP_ENDPOINT: "" }),
  ]);
  try {
    const search = `/v1/search?${new URLSearchParams({
      q: "observed",
      limit: "10",
      providers: GROUPS.zero4.join(","),
    })}`;
    const [observed, plain] = await interleaved(
      [{ url: `${on.url}${search}` }, { url: `${off.url}${search}` }],
      WARM,
      COUNT,
    );
    const times = (runs: typeof observed) => (runs ?? []).map((t) => t.ms);
    const [a, b] = [p50(times(observed)), p50(times(plain))];
    const spans = receiver.spans.length;
    return [{
      measurement: "9 search with metrics and traces on, 4 zero-delay providers, p50 [9]",
      gateway: ms(a),
      naive: "",
      reference: `both off ${ms(b)}; ${spans} spans received`,
      target: `<= +${OVERHEAD_TARGET_MS} ms`,
      result: verdict(a - b <= OVERHEAD_TARGET_MS),
    }];
  } finally {
    await Promise.all([on.stop(), off.stop()]);
    await receiver.close();
  }
}
