/** SHA-256 in hex of bytes, or of a text's UTF-8: the evidence's hashes, Web Crypto on every runtime. */
import { hex } from "../io/digests.ts";

const encoder = new TextEncoder();

export async function sha256OfBytes(bytes: Uint8Array): Promise<string> {
  return hex(
    new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>)),
  );
}

export function sha256OfText(text: string): Promise<string> {
  return sha256OfBytes(encoder.encode(text));
}
