import { Hono, type MiddlewareHandler } from "hono";
import { rootRegistryStub } from "../durable-objects/object-stubs.ts";
import { parseGrantRequest } from "../shared/grant-request.ts";
import { refusal } from "../shared/refusals.ts";
import { parseRetention } from "../shared/retention.ts";
import { secretsEqual } from "../shared/token.ts";
import { addTransferRoutes } from "./admin-transfer-routes.ts";
import { type AppEnv, publicOrigin, requirePublicOrigin } from "./cap-stub.ts";
import { errorResponse } from "./http-error.ts";
import { readJsonBody, SMALL_JSON_BYTES } from "./json-body.ts";
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

// Vault export and import (docs/export-import.md): behind the same admin check.
addTransferRoutes(adminRoutes);
