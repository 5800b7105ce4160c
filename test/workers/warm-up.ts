import { beforeAll } from "vitest";
import { call } from "./vault.ts";

// Every workers file's first request loads the worker's modules (4-5 s on an
// idle machine, about 10 s in a full run on two busy cores). Made here, in a
// hook with its own timeout, that load is not charged to the file's first
// test, whose 30 s are then its own work's.
beforeAll(async () => {
  await (await call("GET", "/")).arrayBuffer();
});
