/**
 * From a parsed answer to what an attempt reports, the same for a provider over HTTP and an
 * adapter in process: checked against its action's schema and the declared identity, then
 * settled. Search candidates stay as sent (the core sanitises them); health diagnostics are
 * redacted and bounded like every provider text; expand evidence's title and text are redacted
 * with the patterns of candidate metadata (their whitespace kept), made well-formed, and cut at
 * their bounds with the truncation marker and `truncated: true`; statistics are kept as checked.
 */
import type { AttemptCode, ProviderAction } from "../protocol/codes.ts";
import { checkProviderJson } from "../protocol/check-provider-answer.ts";
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
import { protocolError } from "./failure.ts";
import { redact, redactSecrets } from "../io/redact.ts";
import { wellFormed } from "../io/well-formed.ts";
import type {
  ActionResult,
  Description,
  ExpandedEvidence,
  Health,
  Stats,
  TransportResult,
} from "./provider-client.ts";

export type Settled = {
  describe: Description;
  health: Health;
  expand: ExpandedEvidence;
  refresh: Health;
  stats: Stats;
};

function settleDescribe(a: ActionAnswer["describe"]): Description {
  return {
    provider: a.provider,
    scope: a.scope,
    actions: a.actions,
    filters: a.filters,
    protocol_versions: a.protocol_versions,
  };
}

function settleHealth(a: ActionAnswer["health"]): Health {
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

function settleEvidence(a: ActionAnswer["expand"]): ExpandedEvidence {
  const text = cutText(shown(a.text), MAX_EXPAND_TEXT_CHARS);
  return {
    provider: a.provider,
    scope: a.scope,
    locator: a.locator,
    title: cutText(shown(a.title), MAX_TITLE_CHARS).text,
    text: text.text,
    content_type: a.content_type,
    retrieved_at: a.retrieved_at,
    ...(a.revision === undefined ? {} : { revision: a.revision }),
    truncated: text.cut || a.truncated === true,
  };
}

/**
 * Statistics as checked: they reach no caller, only the other members of the provider's score
 * group, summed (src/core/score-group-stats.ts).
 */
function settleStats(a: ActionAnswer["stats"]): Stats {
  return {
    provider: a.provider,
    scope: a.scope,
    document_count: a.document_count,
    total_length: a.total_length,
    terms: a.terms,
  };
}

/**
 * Evidence text as a caller may see it: secrets redacted before the cut, so no cut can leave half
 * of one unrecognised, and a lone UTF-16 surrogate (a provider's JSON can escape one; strict UTF-8
 * bytes never carry one) made U+FFFD, so every strict JSON parser reads the answer.
 */
function shown(text: string): string {
  return wellFormed(redactSecrets(text));
}

/** What settling an answer of each action gives the client that asked. */
export type Settlement = {
  search: TransportResult;
  describe: ActionResult<Description>;
  health: ActionResult<Health>;
  expand: ActionResult<ExpandedEvidence>;
  refresh: ActionResult<Health>;
  stats: ActionResult<Stats>;
};

/**
 * The one way a parsed answer becomes what an attempt reports, whichever transport brought it: the
 * answer is checked against its action's schema and the declared identity (an expand answer must
 * also be about the locator asked), then settled; anything that fails a check is a protocol error.
 */
export function settle<A extends ProviderAction>(
  action: A,
  json: unknown,
  declared: { name: string; scope: string },
  askedLocator?: string,
): Settlement[A] {
  if (action === "search") {
    const checked = checkProviderJson(json, declared);
    if (!checked.ok) return failure(checked.code, checked.message) as Settlement[A];
    const { candidates, warnings } = checked.answer;
    return { kind: "answer", candidates, warnings: warnings ?? [] } as Settlement[A];
  }
  const optional = action as OptionalAction;
  const checked = checkActionJson(optional, json, declared);
  if (!checked.ok) return failure(checked.code, checked.message) as Settlement[A];
  return settleChecked(optional, checked.answer, askedLocator) as Settlement[A];
}

function failure(code: AttemptCode, message: string) {
  return { kind: "failure" as const, ...protocolError(code, message) };
}

function settleChecked<A extends OptionalAction>(
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
      return failure(
        "identity_mismatch",
        "the expand answer is about another locator than the one asked",
      );
    }
    return { kind: "answer", answer: settleEvidence(evidence) as Settled[A] };
  }
  if (action === "stats") {
    return { kind: "answer", answer: settleStats(answer as ActionAnswer["stats"]) as Settled[A] };
  }
  return { kind: "answer", answer: settleHealth(answer as ActionAnswer["health"]) as Settled[A] };
}
