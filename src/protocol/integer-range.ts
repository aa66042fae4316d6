/**
 * The integer fields of the requests (a search's `limit`, `timeout_ms`, `max_age_seconds`; a
 * fetch's `max_chars`, `timeout_ms`, `max_age_seconds`, `max_passages`; a crawl's `max_pages`,
 * `max_depth`): each a closed range written once, from which both its schema and its refusal are
 * made, so every request words a number out of range the same way.
 */
import * as v from "valibot";
import type { EnvelopeCode } from "./codes.ts";

/** A closed range of integers, and the code a number outside it is refused with. */
export type IntegerRange = {
  min: number;
  max: number;
  code: Extract<EnvelopeCode, "invalid_field" | "limit_out_of_range" | "timeout_out_of_range">;
};

/** The schema of an integer in `range`. */
export function integerIn(range: IntegerRange) {
  return v.pipe(v.number(), v.integer(), v.minValue(range.min), v.maxValue(range.max));
}

/** The refusal of a number in `field` outside its range (or not an integer). */
export function outOfRange(
  field: string,
  range: IntegerRange,
): { code: IntegerRange["code"]; field: string; message: string } {
  return {
    code: range.code,
    field,
    message: `${field} must be an integer from ${range.min} to ${range.max}`,
  };
}
