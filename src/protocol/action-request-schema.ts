/**
 * The bodies of `POST /v1/expand` and `POST /v1/refresh` (docs/envelope.md, "Other routes") as
 * valibot schemas, for the OpenAPI document. The routes read a body with action-request.ts, whose
 * parser gives each refusal its own code and message; tests/openapi.test.ts holds the schemas and
 * the parser to the same answers on the same bodies.
 */
import * as v from "valibot";
import { MAX_LOCATOR_CHARS, MAX_NAME_CHARS } from "./limits.ts";

/** A provider as the manifest names it; which names exist is the manifest's to say. */
const ProviderName = v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_NAME_CHARS));

export const ExpandAskSchema = v.strictObject({
  /** A provider's name, from a merged entry's `found_by`. */
  provider: ProviderName,
  /** The entry's `locator`, opaque to the gateway and sent to that provider only. */
  locator: v.pipe(
    v.string(),
    v.minLength(1),
    v.check(
      (s) => s.length <= MAX_LOCATOR_CHARS || Array.from(s).length <= MAX_LOCATOR_CHARS,
      `is longer than ${MAX_LOCATOR_CHARS} code points`,
    ),
  ),
});

export const RefreshAskSchema = v.strictObject({
  provider: ProviderName,
});
