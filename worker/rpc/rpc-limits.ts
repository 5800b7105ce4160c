/**
 * Bounds of a Cap'n Web session. Pipelining lets one request queue a lot of
 * work, so every dimension a client controls is bounded before the work
 * starts (body, messages, nesting) or as it runs (calls, bytes read, calls in
 * flight): a hostile batch costs a scan of its text, never a stall of the
 * worker or of other caps.
 */
export const RPC_LIMITS = {
  /** A batch's body, and one WebSocket message (base64 bytes included): writes over RPC stay small. */
  messageBytes: 8 * 1024 * 1024,
  /** Lines of a batch: a call and its pull are two, so every call a batch may make fits with room to spare. */
  batchMessages: 4096,
  /** Arrays and objects inside one message (capnweb's own default is 256). */
  depth: 64,
  /**
   * Calls on the cap (and caps it mints) in one batch, `.map()` replays
   * included: a `stat` costs the vault 1 to 1.4 ms of CPU on a busy machine,
   * so a full batch stays well under 1 s.
   */
  batchCalls: 250,
  /** How long a batch's calls may take in all before the batch is answered as stuck. */
  batchMillis: 30_000,
  /** Caps minted (`subdir`) by one batch: each is a durable object and a stored record. */
  batchMints: 16,
  /**
   * Calls chained on earlier answers in one batch (`a.subdir().subdir()…` is
   * one link each): a full delegation chain (16 mints) and a call on its end.
   */
  pipelineDepth: 17,
  /**
   * A WebSocket session's calls, as a token bucket: up to `liveCalls` at
   * once (so also what one message may start), refilled at `liveCallsPerSecond`.
   * A session has no end, so only a rate bounds what it costs.
   */
  liveCalls: 100,
  /** A session that keeps calling spends at most about a seventh of the runtime's one thread. */
  liveCallsPerSecond: 100,
  /**
   * Rate refusals a WebSocket session gets before it is closed: each still
   * costs the vault a parse and an answer, so a client that keeps calling
   * past its rate would spend the thread on answers it ignores.
   */
  liveRefusals: 100,
  /** A WebSocket session's mints, as a token bucket like its calls. */
  liveMints: 16,
  liveMintsPerSecond: 4,
  /** Calls a session runs at once; the rest wait their turn. */
  inFlight: 16,
  /** Calls a WebSocket session lets wait before refusing more. */
  waiting: 2048,
  /**
   * Bytes of writes a session holds at once, running or waiting: each
   * waiting write holds its decoded message, so `waiting` alone would let
   * one WebSocket hold thousands of 8 MiB messages in the worker's memory.
   */
  heldBytes: 32 * 1024 * 1024,
  /** One read's bytes: the answer is held whole and base64-encoded. */
  readBytes: 4 * 1024 * 1024,
  /** All reads of one batch, whose answers are held until the batch ends. */
  batchReadBytes: 16 * 1024 * 1024,
  /** Change feeds one WebSocket session holds open: each is a stream from a root's journal. */
  watches: 8,
} as const;
