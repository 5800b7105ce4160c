import { Hono } from "hono";
import { refusal } from "../shared/refusals.ts";
import { type AppEnv, capStub, problemFor } from "./cap-stub.ts";
import { parseSearchQuery, SEARCH_PARAMS, searchThroughCap } from "./content-search.ts";
import { errorResponse } from "./http-error.ts";
import { jsonResponse } from "./json-response.ts";
import { readQuery } from "./query-params.ts";

/**
 * `GET /object/<token>/search`: a regular expression over the files below a
 * path, one bounded page per request (worker/content-search.ts). Routing
 * only: the cap's object grants the search.
 */
export const searchRoutes = new Hono<AppEnv>();

searchRoutes.get("/:token/search", async (c) => {
  const stub = await capStub(c, c.req.param("token"));
  if (!stub.ok) return errorResponse(stub.error);
  const cap = stub.value;
  const q = readQuery(c.req.url, SEARCH_PARAMS);
  const query = q.ok ? parseSearchQuery(q.value as Record<(typeof SEARCH_PARAMS)[number], string | null>) : q;
  if (!query.ok || !q.ok) return errorResponse(await problemFor(cap, query.ok ? refusal("badRequest") : query.error));
  const page = await searchThroughCap(cap, c.env, q.value.path ?? null, query.value);
  return page.ok ? jsonResponse(page.value) : errorResponse(page.error);
});
