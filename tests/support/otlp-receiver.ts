/**
 * A loopback OTLP/HTTP receiver for the tracing tests: a node:http server that keeps every
 * `http/json` export request's spans, flattened with their resource's attributes.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

type Attribute = { key: string; value: Record<string, unknown> };

export type ReceivedSpan = {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
};

export type OtlpReceiver = {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  /** Every request body received, as text. */
  bodies: string[];
  paths: string[];
  close: () => Promise<void>;
};

function flatten(attributes: Attribute[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of attributes ?? []) out[key] = Object.values(value)[0];
  return out;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const paths: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      bodies.push(body);
      paths.push(req.url ?? "");
      try {
        const parsed = JSON.parse(body);
        for (const rs of parsed.resourceSpans ?? []) {
          const resource = flatten(rs.resource?.attributes);
          for (const ss of rs.scopeSpans ?? []) {
            for (const span of ss.spans ?? []) {
              spans.push({
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId ?? "",
                name: span.name,
                kind: span.kind,
                attributes: flatten(span.attributes),
                resource,
              });
            }
          }
        }
      } catch {
        // Not JSON: kept in bodies for the test to see.
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    bodies,
    paths,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
