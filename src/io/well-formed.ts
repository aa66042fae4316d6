/**
 * Text that every strict JSON parser accepts: a lone UTF-16 surrogate (a provider's JSON can
 * carry one as a `\ud800` escape; strict UTF-8 bytes never can) becomes U+FFFD, as the Encoding
 * standard does for bytes it cannot decode. Well-formed text is returned as it is.
 */
type WellFormable = { isWellFormed(): boolean; toWellFormed(): string };

export function wellFormed(text: string): string {
  // ES2024 methods, on Node 20, Deno and workerd alike; the project's type library is ES2023.
  const s = text as unknown as WellFormable;
  return s.isWellFormed() ? text : s.toWellFormed();
}
