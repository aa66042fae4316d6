/**
 * checkProviderAnswer(text, declared): the one check of a provider's answer body, used by the
 * gateway's HTTP transport, by conformance and by the command bridge, so all three accept and
 * refuse the same answers with the same words.
 */
import * as v from "valibot";
import { parseJson } from "./json-value.ts";
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
  const answer = parsed.output;
  if (declared !== null && (answer.provider !== declared.name || answer.scope !== declared.scope)) {
    return refused(
      "identity_mismatch",
      `the answer claims provider "${answer.provider}" scope "${answer.scope}", but the manifest declares "${declared.name}" scope "${declared.scope}"`,
    );
  }
  return { ok: true, answer, json };
}

function refused(code: AnswerProblem, message: string): AnswerCheck {
  return { ok: false, code, message, problems: [message] };
}
