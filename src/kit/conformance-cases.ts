/**
 * The conformance cases: what each sends and what it expects back (docs/protocol.md). Each case is
 * one request, so a transcript shows exactly the exchange a verdict rests on.
 */
import * as v from "valibot";
import { checkProviderAnswer } from "../protocol/check-provider-answer.ts";
import { MAX_LIMIT } from "../protocol/limits.ts";
import {
  JSON_CONTENT_TYPE,
  PROVIDER_REQUEST_VERSION,
  PROVIDER_RESPONSE_VERSION,
  ProviderErrorSchema,
  type ProviderResponse,
} from "../protocol/provider-wire.ts";
import {
  actionRequest,
  checkActionAnswer,
  NOT_SUPPORTED_STATUSES,
  type OptionalAction,
  PROTOCOL_VERSIONS,
} from "../protocol/provider-actions.ts";
import { checkBounds } from "./check-bounds.ts";

/** One answer as a report shows it. */
export type ConformanceResponse = {
  status: number;
  content_type: string | null;
  /** The decoded body, cut to MAX_REPORTED_BODY_CHARS (then `truncated` is true). */
  body: string;
  truncated: boolean;
  /** Decoded bytes received. */
  bytes: number;
};

/** What a case sees of one exchange that got a complete answer. */
export type Exchange = {
  response: ConformanceResponse;
  /** The body as text; null when it is not UTF-8. */
  text: string | null;
  /** The body as JSON; undefined when it is not JSON. */
  json: unknown;
};

export type CaseContext = {
  /** The declared name and scope; null when none were given, and `identity` is not checked. */
  name: string | null;
  scope: string | null;
  /** A query that matches something. */
  query: string;
  /** A query that matches nothing: one random token no corpus holds. */
  nonsense: string;
  /**
   * The actions the provider's describe answer declares; [] when it does not answer describe
   * (a search-only provider), null before the describe case ran.
   */
  actions: string[] | null;
  /** The first locator a search answered, for the expand case; null when none came back. */
  locator: string | null;
};

/**
 * `fail` decides the verdict; `advice` is reported without failing the case. `notChecked` says why
 * a case had nothing to compare with: its verdict is then neither pass nor fail.
 */
export type Judgement = { fail: string[]; advice: string[]; notChecked?: string };

export type CaseSpec = {
  case: string;
  expects: string;
  body: (c: CaseContext) => string;
  check: (x: Exchange, c: CaseContext) => Judgement;
  /** What a later case needs from this exchange (the declared actions, a locator). */
  learn?: (x: Exchange, c: CaseContext) => void;
};

const search = (query: string, limit: number) =>
  JSON.stringify({ schema_version: PROVIDER_REQUEST_VERSION, action: "search", query, limit });

/** "refused with 400, 404, 405 or 501", for the cases' `expects`. */
const REFUSED_AS_NOT_SUPPORTED = `refused with ${orList(NOT_SUPPORTED_STATUSES)}`;
/** What a locator the provider never issued must be answered with (with code `locator_unknown`). */
const UNKNOWN_LOCATOR_STATUSES: readonly number[] = [404];

/** The gateway's default limit: what a provider is asked most often. */
const TYPICAL_LIMIT = 8;

export const CONFORMANCE_CASES = [
  {
    case: "search-valid",
    expects:
      "a valid search answers 200, application/json, a valid tracefetch.provider-response.v1",
    body: (c) => search(c.query, TYPICAL_LIMIT),
    check: (x) => ({ fail: validAnswer(x).problems, advice: [] }),
    learn: (x, c) => {
      c.locator = validAnswer(x).answer?.candidates[0]?.locator ?? null;
    },
  },
  {
    case: "limit-1",
    expects: "a search with limit 1 answers at most 1 candidate",
    body: (c) => search(c.query, 1),
    check: (x, c) => withinLimit(x, c, 1),
  },
  {
    case: "limit-3",
    expects: "a search with limit 3 answers at most 3 candidates",
    body: (c) => search(c.query, 3),
    check: (x, c) => withinLimit(x, c, 3),
  },
  {
    case: "honest-empty",
    expects: "a query that matches nothing answers 200 with candidates: []",
    body: (c) => search(c.nonsense, TYPICAL_LIMIT),
    check: (x) => {
      const { problems, answer } = validAnswer(x);
      if (answer !== null && answer.candidates.length > 0) {
        problems.push(
          `${answer.candidates.length} candidate(s) for a query that matches nothing; nothing found is candidates: []`,
        );
      }
      return { fail: problems, advice: [] };
    },
  },
  {
    case: "identity",
    expects: "provider and scope equal the declared name and scope",
    body: (c) => search(c.query, 1),
    check: (x, c) => {
      if (c.name === null || c.scope === null) {
        const said = reportedIdentity(x);
        return {
          fail: [],
          advice: [],
          notChecked: said === null
            ? "no name and scope were declared, and the answer names none"
            : `no name and scope were declared; the provider says provider "${said.provider}", scope "${said.scope}"`,
        };
      }
      return { fail: validAnswer(x, { name: c.name, scope: c.scope }).problems, advice: [] };
    },
  },
  {
    case: "bounds",
    expects:
      "every field within the gateway's bounds (title, snippet, published_at, locator, warnings, metadata)",
    body: (c) => search(c.query, MAX_LIMIT),
    check: (x) => {
      const { problems, answer } = validAnswer(x);
      if (answer === null) return { fail: problems, advice: [] };
      const advice = answer.candidates.length === 0
        ? ["no candidates came back, so no candidate field was checked"]
        : [];
      return { fail: checkBounds(answer), advice };
    },
  },
  {
    case: "malformed-missing-query",
    expects: "a search request without a query is refused with 400",
    body: () =>
      JSON.stringify({ schema_version: PROVIDER_REQUEST_VERSION, action: "search", limit: 3 }),
    check: (x) => refused(x, [400], "invalid_request"),
  },
  {
    case: "malformed-not-json",
    expects: "a body that is not JSON is refused with 400",
    body: () => `{"schema_version":"${PROVIDER_REQUEST_VERSION}","action":"search",`,
    check: (x) => refused(x, [400], "invalid_request"),
  },
  {
    case: "unsupported-action",
    expects: "an action the provider does not support is answered 404 or 501, never a success",
    body: (c) =>
      JSON.stringify({
        schema_version: PROVIDER_REQUEST_VERSION,
        action: "no-such-action",
        query: c.query,
        limit: 3,
      }),
    check: (x) => refused(x, [404, 501], "unsupported_action"),
  },
  {
    case: "describe",
    expects:
      `describe answers a valid tracefetch.provider-describe.v1 naming a protocol major this gateway speaks, or is ${REFUSED_AS_NOT_SUPPORTED} (a search-only provider)`,
    body: () => JSON.stringify(actionRequest("describe")),
    check: (x, c) => {
      const { status } = x.response;
      if (NOT_SUPPORTED_STATUSES.includes(status)) {
        return {
          fail: [],
          advice: [
            `describe was refused (HTTP ${status}): the gateway takes this provider as search-only, protocol 1`,
          ],
        };
      }
      const problems = actionAnswerProblems("describe", x, c);
      if (problems.length > 0) return { fail: problems, advice: [] };
      const { protocol_versions } = x.json as { protocol_versions: number[] };
      if (!protocol_versions.some((major) => PROTOCOL_VERSIONS.includes(major))) {
        return {
          fail: [
            `protocol_versions ${
              JSON.stringify(protocol_versions)
            } shares no major with this gateway's ${JSON.stringify(PROTOCOL_VERSIONS)}`,
          ],
          advice: [],
        };
      }
      return { fail: [], advice: [] };
    },
    learn: (x, c) => {
      const checked = x.response.status === 200
        ? checkActionAnswer("describe", x.text, null)
        : null;
      c.actions = checked?.ok ? checked.answer.actions : [];
    },
  },
  actionCase(
    "health",
    `health answers a valid tracefetch.provider-health.v1 when describe declares it, else is ${REFUSED_AS_NOT_SUPPORTED}`,
    () => JSON.stringify(actionRequest("health")),
  ),
  actionCase(
    "expand",
    `expand of a locator the provider answered gives its evidence when describe declares expand, else is ${REFUSED_AS_NOT_SUPPORTED}`,
    (c) =>
      JSON.stringify(
        actionRequest("expand", { locator: c.locator ?? `${c.nonsense}:no-candidate` }),
      ),
  ),
  {
    case: "expand-unknown-locator",
    expects:
      `expand of a locator the provider never issued is 404 locator_unknown when describe declares expand, else is ${REFUSED_AS_NOT_SUPPORTED}; never a success`,
    body: (c) => JSON.stringify(actionRequest("expand", { locator: `${c.nonsense}:never-issued` })),
    check: (x, c) => {
      if (!declares(c, "expand")) return refused(x, NOT_SUPPORTED_STATUSES, "unsupported_action");
      const { status } = x.response;
      const parsed = v.safeParse(ProviderErrorSchema, x.json);
      if (
        !UNKNOWN_LOCATOR_STATUSES.includes(status) || !parsed.success ||
        parsed.output.code !== "locator_unknown"
      ) {
        const said = parsed.success ? `, code "${parsed.output.code}"` : ", no provider-error body";
        return {
          fail: [
            `expected HTTP 404 with code "locator_unknown", got ${status}${said}; without the code the gateway reads a 404 as "expand not supported"`,
          ],
          advice: [],
        };
      }
      return { fail: [], advice: [] };
    },
  },
  actionCase(
    "refresh",
    `refresh answers a valid tracefetch.provider-health.v1 when describe declares it, else is ${REFUSED_AS_NOT_SUPPORTED}`,
    () => JSON.stringify(actionRequest("refresh")),
  ),
] as const satisfies readonly CaseSpec[];

function declares(c: CaseContext, action: OptionalAction): boolean {
  return (c.actions ?? []).includes(action);
}

/**
 * An action the provider declares must answer validly; one it does not declare must be refused
 * honestly (NOT_SUPPORTED_STATUSES), never answered with an empty success.
 */
function actionCase<N extends "health" | "expand" | "refresh">(
  action: N,
  expects: string,
  body: (c: CaseContext) => string,
) {
  return {
    case: action,
    expects,
    body,
    check: (x: Exchange, c: CaseContext): Judgement => {
      if (!declares(c, action)) return refused(x, NOT_SUPPORTED_STATUSES, "unsupported_action");
      if (action === "expand" && c.locator === null) {
        return {
          fail: [],
          advice: [],
          notChecked: "no search answered a candidate, so there was no locator to expand",
        };
      }
      const problems = actionAnswerProblems(action, x, c);
      if (problems.length === 0 && action === "expand") {
        const { locator } = x.json as { locator: string };
        if (locator !== c.locator) {
          problems.push("the answer is about another locator than the one asked");
        }
      }
      return { fail: problems, advice: [] };
    },
  } as const;
}

/** Why an action's answer is not a 200 with a valid document of its schema (and the declared identity). */
function actionAnswerProblems(action: OptionalAction, x: Exchange, c: CaseContext): string[] {
  const r = x.response;
  if (r.status !== 200) return [`expected HTTP 200, got ${r.status}`];
  if (!JSON_CONTENT_TYPE.test(r.content_type ?? "")) {
    return [`expected content-type application/json, got "${r.content_type ?? ""}"`];
  }
  const declared = c.name === null || c.scope === null ? null : { name: c.name, scope: c.scope };
  const checked = checkActionAnswer(action, x.text, declared);
  return checked.ok ? [] : [checked.message];
}

export type ConformanceCaseName = (typeof CONFORMANCE_CASES)[number]["case"];

/**
 * The problems that keep an answer from being a usable v1 answer (naming the declared provider and
 * scope, when `declared` is given), and the answer when there are none.
 */
function validAnswer(
  x: Exchange,
  declared: { name: string; scope: string } | null = null,
): { problems: string[]; answer: ProviderResponse | null } {
  const r = x.response;
  if (r.status !== 200) {
    const redirect = r.status >= 300 && r.status < 400
      ? " (a redirect, which the gateway never follows)"
      : "";
    return { problems: [`expected HTTP 200, got ${r.status}${redirect}`], answer: null };
  }
  if (!JSON_CONTENT_TYPE.test(r.content_type ?? "")) {
    return {
      problems: [`expected content-type application/json, got "${r.content_type ?? ""}"`],
      answer: null,
    };
  }
  const checked = checkProviderAnswer(x.text, declared);
  if (!checked.ok) {
    const problems = checked.code === "schema_violation"
      ? checked.problems.map((p) => `not a valid ${PROVIDER_RESPONSE_VERSION}: ${p}`)
      : checked.problems;
    return { problems, answer: null };
  }
  // The raw JSON, not the schema's output: the bounds check must see every key as sent.
  return { problems: [], answer: checked.json as ProviderResponse };
}

/** The provider and scope a 200 answer names, whether or not the rest of it is valid. */
export function reportedIdentity(x: Exchange): { provider: string; scope: string } | null {
  if (x.response.status !== 200) return null;
  const json = x.json as { provider?: unknown; scope?: unknown } | null | undefined;
  if (typeof json !== "object" || json === null) return null;
  const { provider, scope } = json;
  return typeof provider === "string" && typeof scope === "string" ? { provider, scope } : null;
}

function withinLimit(x: Exchange, c: CaseContext, limit: number): Judgement {
  const { problems, answer } = validAnswer(x);
  if (answer === null) return { fail: problems, advice: [] };
  if (answer.candidates.length > limit) {
    problems.push(`${answer.candidates.length} candidates for limit ${limit}`);
  }
  if (answer.candidates.length === 0) {
    problems.push(
      `no candidates for the query "${c.query}", so the limit was never at work; choose a query that matches`,
    );
  }
  return { fail: problems, advice: [] };
}

/** A refusal: one of `statuses`; an error body with `code` is advised, not required. */
function refused(x: Exchange, statuses: readonly number[], code: string): Judgement {
  const { status } = x.response;
  if (!statuses.includes(status)) return notRefused(status, statuses);
  const parsed = v.safeParse(ProviderErrorSchema, x.json);
  if (!parsed.success) {
    return {
      fail: [],
      advice: [
        `answer with a tracefetch.provider-error.v1 body, code "${code}", so the gateway reports it exactly`,
      ],
    };
  }
  return parsed.output.code === code
    ? { fail: [], advice: [] }
    : { fail: [], advice: [`the error body says code "${parsed.output.code}"; "${code}" fits`] };
}

/** The failure of a case that wanted one of `statuses` and got `status`. */
function notRefused(status: number, statuses: readonly number[]): Judgement {
  const success = status >= 200 && status < 300 ? ": a success for a request it cannot serve" : "";
  return { fail: [`expected HTTP ${orList(statuses)}, got ${status}${success}`], advice: [] };
}

/** "400, 404, 405 or 501". */
function orList(items: readonly number[]): string {
  return items.length < 2
    ? items.join("")
    : `${items.slice(0, -1).join(", ")} or ${items[items.length - 1]}`;
}
