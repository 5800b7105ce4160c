import { connect } from "node:net";
import type { Backend } from "../shared/wire-types.ts";
import { Findings } from "./findings.ts";
import type { Row } from "./table.ts";
import type { Fixture } from "./vault-fixture.ts";

const PAUSE_MS = 150;

/**
 * Keep-alive honesty: a response without `Connection: close` promises that
 * the connection takes another request. Clients pool such connections, so a
 * vault that answers and then hangs up kills some other, innocent request.
 * Each probe sends a request the vault refuses before reading its body,
 * waits, then sends a plain GET on the same connection: it must be answered,
 * unless the first response said `Connection: close`.
 */
export async function runKeepAlive(fixture: Fixture, backend: Backend): Promise<Row> {
  const findings = new Findings(
    "http: keep-alive after refusals",
    `RELIABILITY_SCALE=small RELIABILITY_ONLY=fuzz RELIABILITY_CASE=0 RELIABILITY_BACKEND=${backend} npm run reliability`,
  );
  const port = Number(new URL(fixture.vault.url).port);
  const cap = new URL(fixture.roots[backend].url).pathname;
  const body = "x".repeat(70_000);
  const probes: [string, string][] = [
    [
      "PUT with a path that escapes, 70 KB body",
      `PUT ${cap}/file?path=..%2Fx HTTP/1.1\r\nHost: v\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    ],
    [
      "PUT through an unknown token, 70 KB body",
      `PUT /object/${"b".repeat(32)}/file?path=x HTTP/1.1\r\nHost: v\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    ],
    [
      "POST /move through an unknown token, 2-byte body",
      `POST /object/${"b".repeat(32)}/move HTTP/1.1\r\nHost: v\r\nContent-Length: 2\r\n\r\n{}`,
    ],
    // (A body declared past the size limit is refused unread, and its connection
    // closed: it cannot carry another request before that body ends anyway.)
  ];
  for (const [name, first] of probes) {
    const outcome = await probe(port, first, `GET ${cap} HTTP/1.1\r\nHost: v\r\n\r\n`);
    if (outcome !== "ok") findings.add("other", `${backend}: ${name}: ${outcome}`);
  }
  return { check: "http: keep-alive after refusals", backend, cases: probes.length, findings };
}

/** "ok", or what went wrong with the second request on the connection. */
function probe(port: number, first: string, second: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    let data = "";
    let sentSecond = false;
    const done = (outcome: string) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(
      () => done(sentSecond ? "no answer to the second request" : "no answer to the first request"),
      10_000,
    );
    socket.on("error", () => undefined);
    socket.on("connect", () => socket.write(first));
    socket.on("data", (chunk: Buffer) => {
      data += chunk.toString("latin1");
      const heads = data.match(/HTTP\/1\.1 \d{3}[\s\S]*?\r\n\r\n/g) ?? [];
      if (heads.length === 1 && !sentSecond) {
        if (/\r\nconnection: *close/i.test(heads[0]!)) return done("ok");
        sentSecond = true;
        setTimeout(() => socket.write(second), PAUSE_MS);
      }
      if (heads.length >= 2) done("ok");
    });
    socket.on("close", () =>
      done(
        sentSecond
          ? `answered ${/HTTP\/1\.1 (\d{3})/.exec(data)?.[1]} without Connection: close, then closed the connection before the next request was answered`
          : "closed without any answer",
      ),
    );
  });
}
