/** LangGraph JS over a cap (docs/langgraph.md): a checkpointer, and a store. */
export { CapCheckpointSaver, type CapCheckpointSaverOptions } from "./cap-checkpoint-saver.ts";
export { CheckpointFileError } from "./files.ts";
