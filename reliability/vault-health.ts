import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { Backend } from "../shared/wire-types.ts";
import { json, text } from "./http-call.ts";
import { call, type Fixture } from "./vault-fixture.ts";

/**
 * "The vault answers correctly afterwards": a fresh write, read back, listed,
 * stat'ed and deleted through the root cap; and the canaries outside the
 * root still hold the canary, so no hostile request changed anything there.
 * Returns what is wrong, or nothing.
 */
export async function vaultHealth(fixture: Fixture, backend: Backend): Promise<string[]> {
  const problems: string[] = [];
  const cap = fixture.roots[backend].url;
  const name = `health-${randomBytes(4).toString("hex")}`;
  const content = `health check ${name}\n`;
  const q = (p: string) => `?path=${encodeURIComponent(p)}`;
  const expect = (what: string, ok: boolean, detail: string) => {
    if (!ok) problems.push(`${what}: ${detail.slice(0, 200)}`);
  };

  const info = await call(cap);
  expect("root info", info.status === 200, `${info.status} ${text(info)}`);
  const written = await call(`${cap}/file${q(`${name}/f.txt`)}`, { method: "PUT", body: content });
  expect("write", written.status === 201, `${written.status} ${text(written)}`);
  const read = await call(`${cap}/file${q(`${name}/f.txt`)}`);
  expect("read back", read.status === 200 && text(read) === content, `${read.status} ${text(read)}`);
  const list = await call(`${cap}/list${q(name)}`);
  const names = (json(list) as { entries?: { name: string }[] } | undefined)?.entries?.map((e) => e.name);
  expect("list", list.status === 200 && JSON.stringify(names) === '["f.txt"]', `${list.status} ${text(list)}`);
  const removed = await call(`${cap}/file${q(`${name}/f.txt`)}`, { method: "DELETE" });
  expect("delete", removed.status === 204, `${removed.status} ${text(removed)}`);
  const gone = await call(`${cap}/stat${q(`${name}/f.txt`)}`);
  expect("deleted stays deleted", gone.status === 404, `${gone.status} ${text(gone)}`);

  const sibling = await call(`${fixture.siblings[backend].url}/file${q("canary.txt")}`);
  expect(
    "sibling canary intact",
    sibling.status === 200 && text(sibling) === fixture.canary,
    `${sibling.status} ${text(sibling).slice(0, 40)}`,
  );
  if (backend === "disk") {
    const outside = await readFile(path.join(path.dirname(fixture.vault.diskRoot), "outside-canary.txt"), "utf8").catch(
      (e: Error) => e.message,
    );
    expect("host canary intact", outside === fixture.canary, outside.slice(0, 40));
  }
  return problems;
}
