/**
 * The RPC fuzz surfaces: how a case (fuzz-rpc-cases.ts) is sent as a batch or
 * over a WebSocket, and how capnweb's answers are judged against the contract.
 */
import { isErrorCode } from "../shared/error-codes.ts";
import { type Arg, linesOf, type RpcCase, type RpcLine, rpcKind } from "./fuzz-rpc-cases.ts";
import type { Surface } from "./fuzz-surfaces.ts";
import { text } from "./http-call.ts";
import { versionText } from "./surface-cases.ts";
import {
  capUrl,
  judgeAnswer,
  judgeText,
  outcomeOf,
  type Report,
  type SurfaceTarget,
  sendHttp,
} from "./surface-target.ts";
import { openSocket } from "./ws-client.ts";

const CASE_TIMEOUT_MS = 30_000;
/** A socket session is read until every pulled call is answered, or nothing came for this long. */
const SOCKET_IDLE_MS = 1_000;

/** The lines as sent, and every string and byte string in them (a write answers their hashes). */
function render(
  target: SurfaceTarget,
  lines: RpcLine[],
  wellFormed: boolean,
): { messages: string[]; sent: (string | Uint8Array)[]; pulled: Set<number> } {
  const messages: string[] = [];
  const sent: (string | Uint8Array)[] = [];
  const pulled = new Set<number>();
  const subdirs = new Set<number>();
  let pushes = 0;
  // A raw line may hold pushes of its own, which take ids the count above does not see: after one,
  // no id this side computes names what it meant to (RELIABILITY_SEED=65740938 revoked the root cap:
  // `["push",["import",0]]` took the id of the throwaway child its revoke was sent to).
  let idsKnown = true;
  // A reference that names an earlier push (or the main cap), for the well-formed cases.
  const live = (id: number) => (id <= 0 || pushes === 0 ? 0 : ((id - 1) % pushes) + 1);
  const pushLine = (on: number, path: (string | number)[], args: unknown[] | null) => {
    messages.push(JSON.stringify(["push", args === null ? ["pipeline", on, path] : ["pipeline", on, path, args]]));
    return ++pushes;
  };
  const encode = (a: Arg): unknown => {
    if ("path" in a) {
      sent.push(a.path);
      return a.path;
    }
    if ("version" in a) return versionText(target, a.version);
    if ("since" in a) return { since: versionText(target, a.since) };
    if ("bytes" in a) {
      sent.push(Buffer.from(a.bytes, "base64"));
      return ["bytes", a.bytes];
    }
    if ("ref" in a) {
      const ref = wellFormed ? live(a.ref) : a.ref;
      return a.via === undefined ? ["import", ref] : ["pipeline", ref, a.via];
    }
    if (typeof a.value === "string") sent.push(a.value);
    // A literal array is escaped as capnweb escapes one; the specials are sent as they are.
    return a.value;
  };
  for (const line of lines) {
    if ("raw" in line) {
      messages.push(...line.raw.split("\n"));
      if (line.raw.includes('"push"')) idsKnown = false;
      continue;
    }
    if ("pull" in line) {
      const ids =
        line.pull === "each"
          ? Array.from({ length: pushes }, (_, i) => i + 1).filter((i) => !pulled.has(i))
          : line.pull === "last"
            ? pushes > 0
              ? [pushes]
              : []
            : [line.pull];
      for (const id of ids) {
        messages.push(JSON.stringify(["pull", id]));
        pulled.add(id);
      }
      continue;
    }
    const { path, args } = line.push;
    let on = wellFormed ? live(line.push.on) : line.push.on;
    // Revoking is only ever tried on a child minted in the same session: the roles' caps live for the whole run.
    if (path.includes("revoke") && !idsKnown) continue;
    if (path.includes("revoke") && !subdirs.has(on)) on = pushLine(0, ["subdir"], ["dir"]);
    const id = pushLine(on, path, args === null ? null : args.map(encode));
    if (path.length === 1 && path[0] === "subdir" && on === 0) subdirs.add(id);
  }
  return { messages, sent, pulled };
}

/** capnweb's answers: each a JSON array; each error a contract refusal with its text and no stack. */
function judgeMessages(messages: readonly string[], report: Report, seen: (outcome: string) => void): void {
  for (const line of messages) {
    if (line === "") continue;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      report("other", `an answer line that is not JSON: ${line.slice(0, 120)}`);
      continue;
    }
    if (!Array.isArray(message)) {
      report("other", `an answer that is not a capnweb message: ${line.slice(0, 120)}`);
      continue;
    }
    const error = message[0] === "reject" ? message[2] : message[0] === "abort" ? message[1] : undefined;
    const [tag, , text, stack, props] = Array.isArray(error) ? error : [];
    const code = (props as { code?: unknown } | undefined)?.code;
    seen(error === undefined ? String(message[0]) : `${message[0]} ${String(code)}`);
    if (error === undefined) continue;
    if (tag !== "error" || typeof text !== "string")
      report("other", `a ${message[0]} without an error: ${line.slice(0, 160)}`);
    else if (!isErrorCode(code)) report("other", `an RPC error outside the contract: ${line.slice(0, 160)}`);
    else if (typeof stack === "string" && stack !== "")
      report("leak", `an RPC error with a stack: ${line.slice(0, 160)}`);
  }
}

export const rpcBatchSurface: Surface<RpcCase> = {
  name: "rpc-batch",
  cases: linesOf,
  kind: rpcKind("batch"),
  run: async (target, c, report, seen) => {
    const { messages, sent } = render(target, c.lines, c.wellFormed);
    const observed = await sendHttp(
      report,
      `${capUrl(target, c.role)}/rpc`,
      { method: "POST", body: messages.join("\n") },
      CASE_TIMEOUT_MS,
    );
    for (const v of judgeAnswer(target, c.role, observed, sent)) report(v.kind, v.detail);
    if (observed.status !== 200) seen(outcomeOf(observed));
    else judgeMessages(text(observed).split("\n"), report, seen);
  },
};

export const rpcSocketSurface: Surface<RpcCase> = {
  name: "rpc-socket",
  cases: linesOf,
  kind: rpcKind("socket"),
  run: async (target, c, report, seen) => {
    const { messages, sent, pulled } = render(target, c.lines, c.wellFormed);
    const socket = await openSocket(`${capUrl(target, c.role)}/rpc`, {}, CASE_TIMEOUT_MS);
    try {
      if (socket.handshake.status !== 101) {
        seen(`handshake ${outcomeOf(socket.handshake)}`);
        for (const v of judgeAnswer(target, c.role, socket.handshake, sent)) report(v.kind, v.detail);
        return;
      }
      for (const m of messages) socket.send(m);
      const answered = () =>
        [...pulled].every((id) =>
          socket.messages.some((m) => m.startsWith(`["resolve",${id},`) || m.startsWith(`["reject",${id},`)),
        );
      const started = Date.now();
      let heard = -1;
      while (socket.closeCode === null && !answered() && Date.now() - started < CASE_TIMEOUT_MS) {
        if (socket.messages.length === heard) break;
        heard = socket.messages.length;
        await socket.next(SOCKET_IDLE_MS);
      }
      for (const v of judgeText(target, c.role, socket.messages.join("\n"), sent)) report(v.kind, v.detail);
      judgeMessages(socket.messages, report, seen);
      if (socket.closeCode !== null && socket.closeCode >= 1011 && socket.closeCode <= 1014)
        report("5xx", `the session closed with ${socket.closeCode}`);
    } finally {
      socket.close();
    }
  },
};
