import type { EchoedName, RefusalEntry } from "./refusal-entry.ts";

/** Content search, Cap'n Web RPC and WebDAV: part of the one table in refusals.ts. */
export const PROTOCOL_REFUSALS = {
  // -- content search (GET /search, worker/content-search.ts)
  searchPatternMissing: { code: "bad_request", message: "pattern is required: a regular expression" },
  searchPatternTooLong: {
    code: "bad_request",
    message: (p: { max: number }) => `a search pattern holds at most ${p.max} characters`,
  },
  searchPatternSyntax: {
    code: "bad_request",
    message: "pattern is not a regular expression this vault accepts: RE2 syntax, without backreferences or lookaround",
  },
  searchPatternTooComplex: {
    code: "bad_request",
    message: (p: { max: number }) => `the pattern compiles to more than ${p.max} instructions; use a simpler one`,
  },
  searchMode: { code: "bad_request", message: "mode must be lines, count or files" },
  searchContext: {
    code: "bad_request",
    message: (p: { max: number }) => `context must be an integer from 0 to ${p.max}`,
  },
  searchIgnoreCase: { code: "bad_request", message: "ignoreCase must be true or false" },
  // The same bad encoding is an invalid path in `path`, a bad request elsewhere.
  badPathEncoding: { code: "invalid_path", message: "invalid percent-encoding in the query" },
  badQueryEncoding: { code: "bad_request", message: "invalid percent-encoding in the query" },
  repeatedQuery: {
    code: "bad_request",
    message: (p: { name: EchoedName }) => `the query parameter "${p.name}" is given more than once`,
  },
  malformedDiskCall: { code: "bad_request", message: "malformed disk call" },
  // -- Cap'n Web RPC (worker/rpc/)
  rpcMalformed: { code: "bad_request", message: "malformed RPC message" },
  rpcUnresolvedPromise: {
    code: "bad_request",
    message: "an RPC batch passes a promise of its own that it never resolves; nothing was run",
  },
  rpcFlooded: { code: "unavailable", message: "this RPC session kept calling past its rate, so it was closed" },
  rpcBatchStuck: { code: "bad_request", message: "the RPC batch waited on a value its client never sent" },
  rpcNeedsUpgrade: { code: "bad_request", message: "RPC takes a POST batch or a WebSocket upgrade" },
  rpcTooManyMessages: {
    code: "too_large",
    message: (p: { limit: number }) => `an RPC batch holds at most ${p.limit} messages`,
  },
  rpcTooDeep: {
    code: "bad_request",
    message: (p: { limit: number }) => `RPC messages nest at most ${p.limit} levels deep`,
  },
  rpcTooManyCalls: {
    code: "too_large",
    message: (p: { limit: number }) => `an RPC batch makes at most ${p.limit} calls`,
  },
  rpcTooManyMints: {
    code: "too_large",
    message: (p: { limit: number }) => `an RPC batch mints at most ${p.limit} caps`,
  },
  rpcPipelineTooDeep: {
    code: "too_large",
    message: (p: { limit: number }) => `an RPC batch chains at most ${p.limit} calls on earlier answers`,
  },
  rpcCallRate: {
    code: "unavailable",
    message: (p: { perSecond: number }) =>
      `an RPC session makes at most ${p.perSecond} calls a second; try again later`,
  },
  rpcMintRate: {
    code: "unavailable",
    message: (p: { perSecond: number }) => `an RPC session mints at most ${p.perSecond} caps a second; try again later`,
  },
  rpcCallsWaiting: { code: "unavailable", message: "too many RPC calls waiting; try again later" },
  rpcBytesWaiting: { code: "unavailable", message: "too many bytes of RPC writes held at once; try again later" },
  rpcReadTooLarge: {
    code: "too_large",
    message: (p: { limit: number }) => `reads over RPC are limited to ${p.limit} bytes; GET /file has no limit`,
  },
  rpcReadBudget: {
    code: "too_large",
    message: (p: { limit: number }) => `an RPC batch reads at most ${p.limit} bytes in all`,
  },
  rpcWatchNeedsLive: {
    code: "bad_request",
    message: "watch needs a WebSocket session (connectLive); a batch ends with its answer",
  },
  rpcTooManyWatches: {
    code: "too_large",
    message: (p: { limit: number }) => `an RPC session watches at most ${p.limit} feeds at once`,
  },
  rpcNotACall: { code: "bad_request", message: "no such method on the cap, or a malformed RPC message" },
  rpcBytes: { code: "bad_request", message: "bytes must be a Uint8Array, an ArrayBuffer or a string" },
  rpcOptions: { code: "bad_request", message: "options must be an object" },
  // -- globs (shared/glob-compile.ts): MCP's search tools, content search, the Agents workspace
  globTooLong: {
    code: "bad_request",
    message: (p: { max: number }) => `a glob pattern holds at most ${p.max} characters`,
  },
  globTooManyAlternatives: {
    code: "bad_request",
    message: (p: { max: number }) => `a glob pattern's {a,b} braces expand to at most ${p.max} alternatives`,
  },
  // -- service bindings (worker/binding/)
  bindingLength: {
    code: "bad_request",
    message: "length is a stream write's exact size; for bytes or text it must be theirs, or left out",
  },
  // -- WebDAV (worker/dav/): the DAV layer gives some of these a status of WebDAV's own (423, 405, 415)
  davBasicRequired: {
    code: "unauthorized",
    message: "WebDAV at /dav/ takes a cap token as the password of HTTP Basic (any user name)",
  },
  davMethod: { code: "bad_request", message: "that method is not served on WebDAV here" },
  davDepth: { code: "bad_request", message: 'Depth must be "0", "1" or "infinity", as the method allows' },
  davDepthInfinity: { code: "forbidden", message: "PROPFIND with Depth infinity is refused; ask Depth 0 or 1" },
  davXml: {
    code: "bad_request",
    message: (p: { limit: number; depth: number }) =>
      `the XML body must be well formed, without DOCTYPE or entities, at most ${p.limit} bytes and ${p.depth} levels deep`,
  },
  davDestination: { code: "bad_request", message: "Destination must be an http(s) URL or absolute path" },
  davDestinationOutside: {
    code: "forbidden",
    message: "Destination must name a path inside the same cap, on this vault",
  },
  davSameResource: { code: "forbidden", message: "the source and the destination are the same resource" },
  davDestinationHoldsSource: {
    code: "forbidden",
    message: "the destination holds the source: overwriting it would delete what is copied or moved",
  },
  davOverwrite: { code: "bad_request", message: 'Overwrite must be "T" or "F"' },
  davTreeTooLarge: {
    code: "too_large",
    message: (p: { limit: number }) =>
      `WebDAV deletes, copies and moves folders of at most ${p.limit} entries; use the HTTP API for bigger trees`,
  },
  davNoParent: { code: "conflict", message: "the folder that would hold it does not exist" },
  davExists: { code: "conflict", message: "something already exists at that path" },
  davMkcolBody: { code: "bad_request", message: "MKCOL takes no body" },
  davLocked: { code: "conflict", message: "that resource is locked; send its lock token in an If header" },
  davTooManyLocks: {
    code: "too_large",
    message: (p: { limit: number }) => `a cap holds at most ${p.limit} WebDAV locks at once`,
  },
  davNoSuchLock: { code: "conflict", message: "no such lock on this resource" },
  davLockOwner: {
    code: "too_large",
    message: (p: { limit: number }) => `a lock's owner is limited to ${p.limit} bytes`,
  },
  davProtectedProperty: {
    code: "forbidden",
    message: "live properties cannot be set or removed; nothing was changed",
  },
  davPropsFull: {
    code: "too_large",
    message: (p: { resources: number; bytes: number }) =>
      `a cap keeps WebDAV dead properties on at most ${p.resources} resources and ${p.bytes} bytes in all; nothing was changed`,
  },
  davPropsBound: {
    code: "too_large",
    message: (p: { props: number; value: number }) =>
      `a resource keeps at most ${p.props} dead properties, each value at most ${p.value} bytes; nothing was changed`,
  },
} as const satisfies Record<string, RefusalEntry>;
