import { Hono, type MiddlewareHandler } from "hono";
import { rootRegistryStub } from "../durable-objects/object-stubs.ts";
import { parseGrantRequest } from "../shared/grant-request.ts";
import { refusal, refuse } from "../shared/refusals.ts";
import { ok, type Result } from "../shared/result.ts";
import { parseRetention } from "../shared/retention.ts";
import { secretsEqual } from "../shared/token.ts";
import { addTransferRoutes } from "./admin-transfer-routes.ts";
import { type AppEnv, publicOrigin, requirePublicOrigin } from "./cap-stub.ts";
import type { Env } from "./env.ts";
import { errorResponse } from "./http-error.ts";
import { jsonObject, readJsonBody, SMALL_JSON_BYTES } from "./json-body.ts";
import { jsonResponse } from "./json-response.ts";
import { readQuery } from "./query-params.ts";
import { revokeResponse } from "./revoke-response.ts";

/** Admin routes mint, list and revoke root caps; they need `Authorization: Bearer <admin token>`. */
export const adminRoutes = new Hono<AppEnv>();

const requireAdmin: MiddlewareHandler<AppEnv> = async (c, next) => {
  const expected = c.env.CAPVAULT_ADMIN_TOKEN;
  const header = c.req.header("authorization") ?? "";
  const presented = header.startsWith("Bearer ") ? header.slice(7).trim() : "";
  // With no admin token configured, admin routes stay shut rather than open.
  if (!expected || !presented || !(await secretsEqual(presented, expected))) {
    return errorResponse(refusal("adminTokenRequired"));
  }
  await next();
};

adminRoutes.use("*", requireAdmin);

adminRoutes.post("/roots", requirePublicOrigin, async (c) => {
  const body = await readJsonBody(c.req.raw, SMALL_JSON_BYTES);
  if (!body.ok) return errorResponse(body.error);
  const request = parseGrantRequest(body.value, {
    pathField: "prefix",
    extraFields: ["backend", "keepVersions", "keepDays"],
  });
  if (!request.ok) return errorResponse(request.error);
  const retention = parseRetention(body.value as Record<string, unknown>);
  if (!retention.ok) return errorResponse(retention.error);
  const backend = (body.value as { backend?: unknown }).backend;
  if (typeof backend !== "string") return errorResponse(refusal("backendChoice"));
  const result = await rootRegistryStub(c.env).mintRoot(
    { ...request.value, backend, retention: retention.value },
    publicOrigin(c),
  );
  return result.ok ? jsonResponse(result.value, { status: 201 }) : errorResponse(result.error);
});

adminRoutes.get("/roots", async (c) => {
  const query = readQuery(c.req.url, ["cursor", "limit"]);
  if (!query.ok) return errorResponse(query.error);
  const page = await rootRegistryStub(c.env).listRoots(query.value.cursor, query.value.limit);
  return page.ok ? jsonResponse(page.value) : errorResponse(page.error);
});

adminRoutes.delete("/roots/:id", async (c) => {
  return revokeResponse(await rootRegistryStub(c.env).revokeRoot(c.req.param("id")));
});

/** Caps worked on per re-issue step: a few object calls each, so a step stays far below a second of CPU. */
const REISSUE_BUDGET = 16;

/**
 * `POST /admin/reissue-legacy`: one step of re-issuing the caps of state
 * format 0 (docs/upgrading.md). `mintedBefore` (ISO 8601) is when the vault
 * first had a token key, unless the launcher recorded it
 * (`CAPVAULT_FORMAT0_UNTIL`); `ack` names the old ids whose new URLs the
 * caller has kept. Answers the caps re-issued, each until acknowledged.
 */
adminRoutes.post("/reissue-legacy", requirePublicOrigin, async (c) => {
  const body = await readJsonBody(c.req.raw, SMALL_JSON_BYTES);
  if (!body.ok) return errorResponse(body.error);
  const request = parseReissue(body.value, c.env, Date.now());
  if (!request.ok) return errorResponse(request.error);
  const step = await rootRegistryStub(c.env).reissueLegacy(
    { ...request.value, budget: REISSUE_BUDGET },
    publicOrigin(c),
  );
  return step.ok ? jsonResponse(step.value) : errorResponse(step.error);
});

function parseReissue(value: unknown, env: Env, now: number): Result<{ until: number; ack: string[] }> {
  const fields = jsonObject(value ?? {}, ["mintedBefore", "ack"]);
  if (!fields.ok) return fields;
  const { mintedBefore, ack = [] } = fields.value;
  if (!Array.isArray(ack) || ack.some((id) => typeof id !== "string")) return refuse("badRequest");
  let until: number;
  const recorded = Number(env.CAPVAULT_FORMAT0_UNTIL ?? Number.NaN);
  const hasRecord = Number.isSafeInteger(recorded) && recorded > 0;
  if (mintedBefore !== undefined) {
    until = typeof mintedBefore === "string" ? Date.parse(mintedBefore) : Number.NaN;
    if (!Number.isFinite(until) || until > now) return refuse("mintedBeforeInvalid");
    // No signed token is older than the key; a later guess would re-issue (and wipe) signed caps of format 0's shape.
    if (hasRecord && until > recorded) return refuse("mintedBeforeAfterRecord");
  } else {
    if (!hasRecord) return refuse("reissueCutoffUnknown");
    until = recorded;
  }
  return ok({ until, ack: ack as string[] });
}

// Vault export and import (docs/export-import.md): behind the same admin check.
addTransferRoutes(adminRoutes);
