/**
 * checkProviderAnswer(text, declared): the one check of a provider's answer body, used by the
 * gateway's transport (over HTTP and in process, through checkProviderJson), by conformance and by
 * the command bridge, so all of them accept and refuse the same answers with the same words.
 */
import * as v from "valibot";
import { isRecord, parseJson } from "./json-value.ts";
import {
  PROVIDER_RESPONSE_VERSION,
  type ProviderResponse,
  ProviderResponseSchema,
} from "./provider-wire.ts";

/** Why an answer body is unusable: each is a `provider_protocol_error` code of the same name. */
export type AnswerProblem =
  | "invalid_utf8"
  | "invalid_json"
  | "schema_violation"
  | "identity_mismatch";

export type AnswerCheck =
  | {
    ok: true;
    answer: ProviderResponse;
    /** The JSON as sent: the schema's output may have dropped a `__proto__` key a bounds check must see. */
    json: unknown;
  }
  | {
    ok: false;
    code: AnswerProblem;
    /** The first problem as one sentence. */
    message: string;
    /** Every schema issue (`candidates.0.score is not a field of version 1`); else the message. */
    problems: string[];
  };

/**
 * `text` is the body decoded as strict UTF-8 (null when it is not UTF-8). With `declared`, the
 * answer must also name that provider and scope; without, identity is not checked.
 */
export function checkProviderAnswer(
  text: string | null,
  declared: { name: string; scope: string } | null,
): AnswerCheck {
  if (text === null) return refused("invalid_utf8", "the body is not valid UTF-8");
  const json = parseJson(text);
  if (json === undefined) return refused("invalid_json", "the body is not JSON");
  return checkProviderJson(json, declared);
}

/** The same check of an answer already parsed (the transport's reader parses it). */
export function checkProviderJson(
  json: unknown,
  declared: { name: string; scope: string } | null,
): AnswerCheck {
  if (isPlainProviderResponse(json)) return identified(json, json, declared);
  const parsed = v.safeParse(ProviderResponseSchema, json);
  if (!parsed.success) {
    const problems = parsed.issues.map((issue) => {
      const at = v.getDotPath(issue) || "body";
      // A missing required key is a strict_object issue too (with nothing received): test it first.
      const what = issue.received === "undefined"
        ? "is required"
        : issue.type === "strict_object"
        ? "is not a field of version 1"
        : issue.message;
      return `${at} ${what}`;
    });
    return {
      ok: false,
      code: "schema_violation",
      message: `the answer does not match ${PROVIDER_RESPONSE_VERSION}: ${problems[0]}`,
      problems,
    };
  }
  return identified(parsed.output, json, declared);
}

function identified(
  answer: ProviderResponse,
  json: unknown,
  declared: { name: string; scope: string } | null,
): AnswerCheck {
  if (declared !== null && (answer.provider !== declared.name || answer.scope !== declared.scope)) {
    return refused(
      "identity_mismatch",
      `the answer claims provider "${answer.provider}" scope "${answer.scope}", but the manifest declares "${declared.name}" scope "${declared.scope}"`,
    );
  }
  return { ok: true, answer, json };
}

const ANSWER_KEYS = new Set(["schema_version", "provider", "scope", "candidates", "warnings"]);
const CANDIDATE_KEYS = new Set(["title", "locator", "snippet", "published_at", "metadata"]);
/** Keys the schema's record drops from metadata, so an answer holding one is not its own output. */
const DROPPED_KEYS = new Set(["__proto__", "prototype", "constructor"]);

/**
 * Whether decoded JSON is a valid answer exactly as it is: what ProviderResponseSchema accepts and
 * gives back unchanged, checked by hand, in one pass and without copying, for the answers nearly
 * every provider sends. False means only "not this fast way": the schema then judges, so a refusal
 * always carries its words. tests/provider-answer-check.test.ts holds the two to agreement.
 */
function isPlainProviderResponse(json: unknown): json is ProviderResponse {
  if (!isRecord(json) || !onlyKeys(json, ANSWER_KEYS)) return false;
  if (json.schema_version !== PROVIDER_RESPONSE_VERSION) return false;
  if (typeof json.provider !== "string" || typeof json.scope !== "string") return false;
  const { candidates, warnings } = json;
  if (!Array.isArray(candidates)) return false;
  if ("warnings" in json) {
    if (!Array.isArray(warnings)) return false;
    for (const w of warnings) if (typeof w !== "string") return false;
  }
  for (const c of candidates) if (!isPlainCandidate(c)) return false;
  return true;
}

function isPlainCandidate(c: unknown): boolean {
  if (!isRecord(c) || !onlyKeys(c, CANDIDATE_KEYS)) return false;
  if (typeof c.title !== "string") return false;
  if (typeof c.locator !== "string" || c.locator.length === 0) return false;
  if ("snippet" in c && c.snippet !== null && typeof c.snippet !== "string") return false;
  if ("published_at" in c && c.published_at !== null && typeof c.published_at !== "string") {
    return false;
  }
  if (!("metadata" in c)) return true;
  const metadata = c.metadata;
  if (!isRecord(metadata)) return false;
  for (const key in metadata) if (DROPPED_KEYS.has(key)) return false;
  return true;
}

/** Whether every enumerable key (own or inherited, as the schema walks them) is in `allowed`. */
function onlyKeys(value: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  for (const key in value) if (!allowed.has(key)) return false;
  return true;
}

function refused(code: AnswerProblem, message: string): AnswerCheck {
  return { ok: false, code, message, problems: [message] };
}
