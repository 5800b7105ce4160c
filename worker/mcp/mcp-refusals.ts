import { type RefusalEntry, refusalsFrom } from "../../shared/refusals.ts";

const NEW_REQUEST = "send further calls in a new request";

/**
 * The MCP tools' own refusals, the ones no other part of capvault gives: the
 * limits of `edit_file` and of one request's budget. Each text is built from
 * numbers only. What the cap refuses reaches the model with the vault's text.
 */
const MCP_REFUSALS = {
  tooManyEdits: {
    code: "bad_request",
    message: (p: { max: number }) => `at most ${p.max} edits per call; split them over several calls`,
  },
  emptyOldText: { code: "bad_request", message: (p: { edit: number }) => `edit ${p.edit}: oldText is empty` },
  editsSearchTooMuch: {
    code: "bad_request",
    message: (p: { edit: number; max: number }) =>
      `edit ${p.edit}: these edits search more than ${p.max} characters in all (edits × file length); split them over several calls`,
  },
  oldTextMissing: {
    code: "bad_request",
    message: (p: { edit: number }) => `edit ${p.edit}: oldText does not appear verbatim in the file`,
  },
  oldTextRepeated: {
    code: "bad_request",
    message: (p: { edit: number }) =>
      `edit ${p.edit}: oldText appears more than once; include more surrounding text to make it unique`,
  },
  editKeptChanging: {
    code: "precondition_failed",
    message: "the file kept changing while it was being edited; nothing was written",
  },
  listingsSpent: {
    code: "bad_request",
    message: (p: { max: number }) =>
      `this request has used its budget of ${p.max} directory listings; list a subdirectory or fewer levels, or ${NEW_REQUEST}`,
  },
  listedSpent: {
    code: "bad_request",
    message: (p: { max: number }) => `this request has used its budget of ${p.max} listed entries; ${NEW_REQUEST}`,
  },
  callsSpent: {
    code: "bad_request",
    message: (p: { max: number }) =>
      `this request has used its budget of ${p.max} storage calls (reads, stats, writes, listings); ${NEW_REQUEST}`,
  },
  answerSpent: {
    code: "bad_request",
    message: (p: { max: number }) =>
      `this request's answers have used their budget of ${p.max} characters; ${NEW_REQUEST}`,
  },
  readSpent: {
    code: "bad_request",
    message: (p: { max: number }) => `this request has used its budget of ${p.max} characters read; ${NEW_REQUEST}`,
  },
  globsTooLarge: {
    code: "bad_request",
    message: (p: { max: number }) => `these glob patterns expand to more than ${p.max} characters in all`,
  },
  globTooCostly: {
    code: "bad_request",
    message: (p: { max: number }) =>
      `matching these glob patterns took more than ${p.max} steps; use simpler patterns or search a subdirectory`,
  },
  mediaTooLarge: {
    code: "too_large",
    message: (p: { max: number }) => `read_media_file reads files of at most ${p.max} bytes`,
  },
  headAndTail: { code: "bad_request", message: "give head or tail, not both" },
  notACapUri: {
    code: "bad_request",
    message: "subscriptions take file: or skill: URIs of a file under this capability's root",
  },
  subscribeNeedsSession: {
    code: "bad_request",
    message: "resources/subscribe needs the Mcp-Session-Id this server answered initialize with",
  },
  tooManySubscriptions: {
    code: "too_large",
    message: (p: { max: number; chars: number }) =>
      `a session or listen stream holds at most ${p.max} resource subscriptions, each URI at most ${p.chars} characters`,
  },
  tooManyStreams: {
    code: "too_large",
    message: (p: { max: number }) =>
      `a capability holds at most ${p.max} open MCP change streams here at once; close one before opening another`,
  },
} as const satisfies Record<string, RefusalEntry>;

/** The MCP tools' refusal for `reason`. */
export const mcpRefusal = refusalsFrom(MCP_REFUSALS);
