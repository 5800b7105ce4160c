/** LangGraph JS over a cap (docs/langgraph.md): a checkpointer, and a store. */
export { CapCheckpointSaver, type CapCheckpointSaverOptions } from "./cap-checkpoint-saver.ts";
export { CapStore, CapStoreError, type CapStoreErrorCode, type CapStoreOptions } from "./cap-store.ts";
export { CheckpointFileError } from "./files.ts";
