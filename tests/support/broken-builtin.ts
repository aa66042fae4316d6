/**
 * Built-ins whose answers break the wire schema, for the one-answer-path tests on every runtime
 * (tests/broken-builtin.test.ts on Node and Deno, tests/workerd/broken-builtin.test.ts in workerd).
 * The workspace built-in answers what the query names; exa answers one honest page, so a search
 * of both shows the broken attempt beside a good one.
 */
import type { SearchAdapter, SearchAnswer } from "../../src/protocol/provider-contract.ts";

/** What the broken workspace built-in answers, by query. */
export const BROKEN_ANSWERS: Record<string, unknown> = {
  "candidates-null": { candidates: null },
  "title-number": { candidates: [{ title: 42, locator: "https://broken.example/1" }] },
  "no-answer": null,
  "warnings-number": { candidates: [], warnings: 7 },
  "extra-field": { candidates: [{ title: "T", locator: "https://broken.example/2", score: 1 }] },
};

export const BROKEN_MANIFEST = {
  schema_version: "tracefetch.providers.v1",
  providers: [{ name: "workspace", scope: "local" }, { name: "exa", scope: "web" }],
};

export const GOOD_PAGE = { title: "Good page", locator: "https://good.example/1" };

export function brokenBuiltins(): { workspace: SearchAdapter; exa: SearchAdapter } {
  return {
    workspace: {
      name: "workspace",
      scope: "local",
      search: ({ query }) => Promise.resolve(BROKEN_ANSWERS[query] as SearchAnswer),
      // Evidence with a title that is no string: the expand answer breaks its schema too.
      expand: ({ locator }) =>
        Promise.resolve({ title: 42, text: locator } as unknown as {
          title: string;
          text: string;
          content_type: string;
          retrieved_at: string;
        }),
    },
    exa: {
      name: "exa",
      scope: "web",
      search: () => Promise.resolve({ candidates: [GOOD_PAGE] }),
    },
  };
}
