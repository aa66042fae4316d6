/**
 * From a checked action answer to what a caller may see, the same for a provider over HTTP and an
 * adapter in process: health diagnostics redacted and bounded like every provider text, and expand
 * evidence cut at MAX_EXPAND_TEXT_CHARS with the truncation marker and `truncated: true`.
 */
import type { AttemptCode } from "../protocol/codes.ts";
import {
  MAX_DIAGNOSTIC_CHARS,
  MAX_EXPAND_TEXT_CHARS,
  MAX_HEALTH_DIAGNOSTICS,
  MAX_TITLE_CHARS,
} from "../protocol/limits.ts";
import {
  type ActionAnswer,
  checkActionJson,
  cutText,
  type OptionalAction,
} from "../protocol/provider-actions.ts";
import { protocolError } from "./classify.ts";
import { redact } from "./redact.ts";
import type { ActionResult, Description, ExpandedEvidence, Health } from "./provider-client.ts";

export type Settled = {
  describe: Description;
  health: Health;
  expand: ExpandedEvidence;
  refresh: Health;
};

export function settleDescribe(a: ActionAnswer["describe"]): Description {
  return {
    provider: a.provider,
    scope: a.scope,
    actions: a.actions,
    filters: a.filters,
    protocol_versions: a.protocol_versions,
  };
}

export function settleHealth(a: ActionAnswer["health"]): Health {
  return {
    provider: a.provider,
    scope: a.scope,
    status: a.status,
    coverage: a.coverage,
    watermark: a.watermark,
    ...(a.document_count === undefined ? {} : { document_count: a.document_count }),
    diagnostics: (a.diagnostics ?? []).slice(0, MAX_HEALTH_DIAGNOSTICS).map((d) =>
      redact(d, MAX_DIAGNOSTIC_CHARS)
    ),
  };
}

export function settleEvidence(a: ActionAnswer["expand"]): ExpandedEvidence {
  const text = cutText(a.text, MAX_EXPAND_TEXT_CHARS);
  return {
    provider: a.provider,
    scope: a.scope,
    locator: a.locator,
    title: cutText(a.title, MAX_TITLE_CHARS).text,
    text: text.text,
    content_type: a.content_type,
    retrieved_at: a.retrieved_at,
    ...(a.revision === undefined ? {} : { revision: a.revision }),
    truncated: text.cut || a.truncated === true,
  };
}

/**
 * A parsed action answer checked against its schema and the declared identity, then settled; an
 * expand answer must be about the locator asked. Failures are protocol errors, as for search.
 */
export function settleJson<A extends OptionalAction>(
  action: A,
  json: unknown,
  declared: { name: string; scope: string },
  askedLocator?: string,
): ActionResult<Settled[A]> | { kind: "problem"; code: AttemptCode; message: string } {
  const checked = checkActionJson(action, json, declared);
  if (!checked.ok) return { kind: "problem", code: checked.code, message: checked.message };
  return settleChecked(action, checked.answer, askedLocator);
}

export function settleChecked<A extends OptionalAction>(
  action: A,
  answer: ActionAnswer[A],
  askedLocator?: string,
): ActionResult<Settled[A]> {
  if (action === "describe") {
    return {
      kind: "answer",
      answer: settleDescribe(answer as ActionAnswer["describe"]) as Settled[A],
    };
  }
  if (action === "expand") {
    const evidence = answer as ActionAnswer["expand"];
    if (askedLocator !== undefined && evidence.locator !== askedLocator) {
      return {
        kind: "failure",
        ...protocolError(
          "identity_mismatch",
          "the expand answer is about another locator than the one asked",
        ),
      };
    }
    return { kind: "answer", answer: settleEvidence(evidence) as Settled[A] };
  }
  return { kind: "answer", answer: settleHealth(answer as ActionAnswer["health"]) as Settled[A] };
}
