/**
 * `?pretty=1` on any GET: the JSON answer indented by two spaces and ended by a newline, for a
 * person reading curl's output. Only the parameter decides it (never the User-Agent), only the
 * layout of the text changes (never the status, the headers or the content), and a stream or a
 * method other than GET is left as it is. `pretty=0` is the default, compact JSON.
 */
import type { MiddlewareHandler } from "hono";
import { problemEnvelope } from "../envelope/build-envelope.ts";
import { commandOf, type GatewayEnv, requestUrl } from "./caller-middleware.ts";
import { envelopeResponse } from "./respond.ts";

/** Why a `pretty` value is refused, or null when it is one of the two it may have. */
export function prettyProblem(values: readonly string[]): string | null {
  if (values.length > 1) return '"pretty" is given more than once';
  const [value] = values;
  return value === undefined || value === "1" || value === "0"
    ? null
    : "pretty must be 1 (indented JSON) or 0 (compact, the default)";
}

export function prettyJson(): MiddlewareHandler<GatewayEnv> {
  return async (c, next) => {
    if (c.req.raw.method !== "GET") return await next();
    const url = requestUrl(c);
    const values = url.searchParams.getAll("pretty");
    await next();
    const problem = prettyProblem(values);
    // The route's own refusal (a 404, a refused token, a search's bad parameter) comes first; an
    // answer that would have succeeded is refused for the parameter instead.
    if (problem !== null) {
      if (c.res.ok) {
        const command = commandOf(url.pathname);
        c.res = undefined;
        c.res = envelopeResponse(
          problemEnvelope(command, "invalid_field", c.get("requestId"), problem, "pretty"),
        );
      }
      return;
    }
    if (
      values[0] !== "1" || !/^application\/json\b/i.test(c.res.headers.get("content-type") ?? "")
    ) {
      return;
    }
    const answer = c.res;
    const text = await answer.text();
    let indented: string;
    try {
      indented = `${JSON.stringify(JSON.parse(text), null, 2)}\n`;
    } catch {
      indented = text;
    }
    const headers = new Headers(answer.headers);
    headers.delete("content-length");
    // Cleared first: Hono copies the old answer's headers into a new one, content-length included.
    c.res = undefined;
    c.res = new Response(indented, { status: answer.status, headers });
  };
}
