import { beforeAll } from "vitest";
import { call } from "./vault.ts";

// Every workers file's first request loads the worker's modules (4-5 s on an
// idle machine, about 10 s in a full run on two busy cores). Made here, in a
// hook with its own timeout, that load is not charged to the file's first
// test, whose 30 s are then its own work's.
//
// Its own bound is wider than the tests' 30 s: the load is CPU work only (no
// request can hang on it: a fresh isolate compiling the bundle), and in a full
// `npm test` it can coincide with the node suites' launcher starts (about 20
// since 0.2.0's fixture, kill and export suites, each bundling the worker and
// starting workerd). A fresh-clone CI run saw this hook pass 30 s once that
// way (rights-matrix, every test of it then passing alone in 40 s).
beforeAll(async () => {
  await (await call("GET", "/")).arrayBuffer();
}, 120_000);
