/**
 * Decodes an OTLP/HTTP `http/protobuf` trace export (`ExportTraceServiceRequest`, the field numbers
 * of opentelemetry-proto's trace.proto and common.proto) into the shape of its JSON encoding, so
 * the loopback receiver reads both encodings alike. Only what the tests read: ids, names, kinds,
 * attributes, status, resource.
 */

type Field = { number: number; wire: number; value: bigint | Uint8Array };

/** The fields of one message, in order, as the wire format gives them. */
function fields(bytes: Uint8Array): Field[] {
  const out: Field[] = [];
  let at = 0;
  const varint = (): bigint => {
    let result = 0n;
    for (let shift = 0n;; shift += 7n) {
      const byte = bytes[at++];
      if (byte === undefined) throw new Error("truncated varint");
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
    }
  };
  const fixed = (size: number): bigint => {
    let result = 0n;
    for (let i = size - 1; i >= 0; i--) result = (result << 8n) | BigInt(bytes[at + i] as number);
    at += size;
    return result;
  };
  while (at < bytes.length) {
    const tag = Number(varint());
    const [number, wire] = [tag >>> 3, tag & 7];
    switch (wire) {
      case 0:
        out.push({ number, wire, value: varint() });
        break;
      case 1:
        out.push({ number, wire, value: fixed(8) });
        break;
      case 2: {
        const length = Number(varint());
        out.push({ number, wire, value: bytes.subarray(at, at + length) });
        at += length;
        break;
      }
      case 5:
        out.push({ number, wire, value: fixed(4) });
        break;
      default:
        throw new Error(`wire type ${wire} is not used by OTLP`);
    }
  }
  return out;
}

const text = (value: Field["value"]) => new TextDecoder().decode(value as Uint8Array);
const hex = (value: Field["value"]) =>
  [...(value as Uint8Array)].map((b) => b.toString(16).padStart(2, "0")).join("");
const all = (message: Uint8Array, number: number) =>
  fields(message).filter((f) => f.number === number).map((f) => f.value as Uint8Array);
const one = (message: Uint8Array, number: number) =>
  fields(message).find((f) => f.number === number)?.value;

function anyValue(message: Uint8Array): Record<string, unknown> {
  const [field] = fields(message);
  if (field === undefined) return {};
  switch (field.number) {
    case 1:
      return { stringValue: text(field.value) };
    case 2:
      return { boolValue: field.value === 1n };
    case 3:
      return { intValue: BigInt.asIntN(64, field.value as bigint).toString() };
    case 4: {
      const view = new DataView(new ArrayBuffer(8));
      view.setBigUint64(0, field.value as bigint);
      return { doubleValue: view.getFloat64(0) };
    }
    default:
      return { other: field.number };
  }
}

function keyValues(message: Uint8Array, number: number) {
  return all(message, number).map((kv) => ({
    key: text(one(kv, 1) ?? new Uint8Array()),
    value: anyValue((one(kv, 2) as Uint8Array | undefined) ?? new Uint8Array()),
  }));
}

/** The request in the shape of its JSON encoding (ids as hex, enums as numbers). */
export function decodeTraceRequest(body: Uint8Array) {
  return {
    resourceSpans: all(body, 1).map((rs) => ({
      resource: { attributes: keyValues((one(rs, 1) as Uint8Array) ?? new Uint8Array(), 1) },
      scopeSpans: all(rs, 2).map((ss) => ({
        spans: all(ss, 2).map((span) => {
          const status = one(span, 15) as Uint8Array | undefined;
          const parent = one(span, 4);
          return {
            traceId: hex(one(span, 1) ?? new Uint8Array()),
            spanId: hex(one(span, 2) ?? new Uint8Array()),
            ...(parent === undefined || (parent as Uint8Array).length === 0
              ? {}
              : { parentSpanId: hex(parent) }),
            name: text(one(span, 5) ?? new Uint8Array()),
            kind: Number(one(span, 6) ?? 0n),
            attributes: keyValues(span, 9),
            status: status === undefined ? {} : { code: Number(one(status, 3) ?? 0n) },
          };
        }),
      })),
    })),
  };
}
