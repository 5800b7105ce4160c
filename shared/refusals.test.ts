import { describe, expect, it } from "vitest";
import { ERROR_CODES, isErrorCode } from "./error-codes.ts";
import { defaultMessage, echoedName, type ParamReason, type ParamsOf, REASONS, REFUSALS, refusal } from "./refusals.ts";

/** One value of every parameter kind, per reason: the compiler demands an entry for each reason that takes any. */
const SAMPLES: { [R in ParamReason]: ParamsOf<R> } = {
  tooLarge: { limit: 1048576 },
  stateFormatNewer: { stored: 3, build: 2 },
  stateMigrationFailed: { from: 1, to: 2 },
  contentTypeInvalid: { max: 1024 },
  bodyTooLarge: { limit: 65536 },
  needsRights: { rights: ["write", "delete"], any: false },
  tooManyChildren: { limit: 1000 },
  delegationTooDeep: { limit: 16 },
  backendNotDeployed: { backend: "disk" },
  unknownField: { field: echoedName("rihgts") },
  notAString: { field: "prefix" },
  ttlRange: { max: 3153600000 },
  labelInvalid: { max: 256 },
  unknownRight: { known: ["read", "list"] },
  limitRange: { max: 1100 },
  depthRange: { max: 512 },
  searchPatternTooLong: { max: 1000 },
  searchPatternTooComplex: { max: 2000 },
  searchContext: { max: 10 },
  repeatedQuery: { name: echoedName("cursor") },
  keepVersionsRange: { max: 10000 },
  keepDaysRange: { max: 3650 },
  maxBytesRange: { max: 9007199254740991 },
  maxFilesRange: { max: 9007199254740991 },
  quotaBytes: { limit: 1000 },
  quotaFiles: { limit: 10 },
  rpcTooManyMessages: { limit: 4096 },
  rpcTooDeep: { limit: 64 },
  rpcTooManyCalls: { limit: 250 },
  rpcTooManyMints: { limit: 16 },
  rpcPipelineTooDeep: { limit: 16 },
  rpcCallRate: { perSecond: 100 },
  rpcMintRate: { perSecond: 4 },
  rpcReadTooLarge: { limit: 4194304 },
  rpcReadBudget: { limit: 16777216 },
  rpcTooManyWatches: { limit: 8 },
  globTooLong: { max: 1024 },
  globTooManyAlternatives: { max: 64 },
  davXml: { limit: 65536, depth: 32 },
  davTreeTooLarge: { limit: 1000 },
  folderTooLarge: { limit: 20 },
  linesRange: { max: 2000 },
  lineTooLong: { limit: 1048576 },
  linesFileTooLarge: { limit: 16777216 },
  davTooManyLocks: { limit: 64 },
  davLockOwner: { limit: 1024 },
  davPropsFull: { resources: 10000, bytes: 16777216 },
  davPropsBound: { props: 32, value: 4096 },
};

const render = (reason: (typeof REASONS)[number]) =>
  (refusal as (r: string, p?: unknown) => { code: string; message: string })(
    reason,
    (SAMPLES as Record<string, unknown>)[reason],
  );

describe("the refusal table", () => {
  it("maps every reason to a wire code and a non-empty text", () => {
    for (const reason of REASONS) {
      const { code, message } = render(reason);
      expect(isErrorCode(code), reason).toBe(true);
      expect(message, reason).toMatch(/^\S.*\S$/s);
      expect(message, reason).not.toContain("undefined");
    }
  });

  it("gives each refusal one reason: no two reasons answer the same code and text", () => {
    const seen = new Map<string, string>();
    for (const reason of REASONS) {
      const { code, message } = render(reason);
      const key = `${code}: ${message}`;
      expect(seen.get(key), `${reason} repeats ${seen.get(key)}`).toBeUndefined();
      seen.set(key, reason);
    }
  });

  it("keeps the code's own text for every code, so refusals that named only a code read as before", () => {
    const texts = new Set(REASONS.map((r) => `${render(r).code}: ${render(r).message}`));
    for (const code of ERROR_CODES) expect(texts.has(`${code}: ${defaultMessage(code)}`), code).toBe(true);
  });

  it("builds a text from its parameters only, and fixed texts take none", () => {
    expect(refusal("tooLarge", { limit: 7 }).message).toBe("files are limited to 7 bytes");
    expect(refusal("needsRights", { rights: ["read", "list"], any: true }).message).toBe(
      "this operation needs the read or list right",
    );
    for (const [reason, entry] of Object.entries(REFUSALS)) {
      if (typeof entry.message === "string") continue;
      expect(reason in SAMPLES, `${reason} has a sample`).toBe(true);
      // A template is a pure function of its parameters: the same ones give the same text.
      expect(render(reason as ParamReason).message).toBe(render(reason as ParamReason).message);
    }
  });

  it("tells a format-0 token apart by its own code, naming the command and page that re-issue it, and nothing of the token", () => {
    const legacy = refusal("legacyToken");
    expect(legacy.code).toBe("legacy_token");
    expect(legacy.message).toContain("state format 0");
    expect(legacy.message).toContain("`capvault reissue-legacy`");
    expect(legacy.message).toContain("docs/upgrading.md");
    // Fixed: one text for every 32-character token, minted or made up.
    expect(typeof REFUSALS.legacyToken.message).toBe("string");
    expect(defaultMessage("legacy_token")).toBe(legacy.message);
    expect(legacy.message).not.toBe(refusal("noSuchCap").message);
  });

  it("echoes a client's own name at most 40 characters long", () => {
    const long = `${"a".repeat(40)}/srv/vault/tenant-a/`;
    expect(refusal("unknownField", { field: echoedName(long) }).message).toBe(`unknown field "${"a".repeat(40)}"`);
  });

  it("refuses, at compile time, any parameter that could carry a root prefix or a host path", () => {
    const prefix: string = "agents/hermes/";
    // Never run: these lines are here for the type checker (`npm run typecheck`).
    const typeChecks = () => [
      // @ts-expect-error a plain string is no parameter: only echoedName makes one
      refusal("unknownField", { field: prefix }),
      // @ts-expect-error a limit is a number
      refusal("tooLarge", { limit: prefix }),
      // @ts-expect-error a fixed text takes no parameter
      refusal("isDirectory", { path: prefix }),
      // @ts-expect-error a text with parameters needs them
      refusal("tooLarge"),
    ];
    expect(typeof typeChecks).toBe("function");
  });
});
