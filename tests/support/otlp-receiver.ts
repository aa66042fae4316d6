/**
 * A loopback OTLP/HTTP receiver for the tracing tests: a node:http server that keeps every export
 * request's spans, `http/protobuf` or `http/json` as its content type says, flattened with their
 * resource's attributes. Set `delayMs` and it answers each request that much later (a slow
 * collector).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { decodeTraceRequest } from "./otlp-proto.ts";

type Attribute = { key: string; value: Record<string, unknown> };

export type ReceivedSpan = {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
  /** The span status's code: 0 unset, 1 ok, 2 error. */
  status: number;
};

export type OtlpReceiver = {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  /** Every request body received, as text. */
  bodies: string[];
  paths: string[];
  /** Each request's content type, in the order received. */
  types: string[];
  /** Requests being held (with `delayMs`), and the most held at once. */
  held: { now: number; most: number };
  /** Answers every later request this much later. */
  delayMs: number;
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
  const types: string[] = [];
  const held = { now: 0, most: 0 };
  const receiver = { delayMs: 0 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const raw = Buffer.concat(chunks);
      const body = raw.toString("utf8");
      const type = req.headers["content-type"] ?? "";
      bodies.push(body);
      paths.push(req.url ?? "");
      types.push(type);
      try {
        const parsed = type.startsWith("application/x-protobuf") && req.url === "/v1/traces"
          ? decodeTraceRequest(new Uint8Array(raw))
          : JSON.parse(body);
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
                status: span.status?.code ?? 0,
              });
            }
          }
        }
      } catch {
        // Neither encoding: kept in bodies for the test to see.
      }
      if (receiver.delayMs > 0) {
        held.most = Math.max(held.most, ++held.now);
        await new Promise((resolve) => setTimeout(resolve, receiver.delayMs));
        held.now--;
      }
      if (res.destroyed) return;
      // An empty ExportTraceServiceResponse: no bytes in protobuf, `{}` in JSON.
      const protobuf = type.startsWith("application/x-protobuf");
      res.writeHead(200, {
        "content-type": protobuf ? "application/x-protobuf" : "application/json",
      });
      res.end(protobuf ? "" : "{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    bodies,
    paths,
    types,
    held,
    get delayMs() {
      return receiver.delayMs;
    },
    set delayMs(ms: number) {
      receiver.delayMs = ms;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
