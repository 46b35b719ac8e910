// PodUpdate: what pod sources emit and the config mux forwards (upstream kubetypes.PodUpdate).
import type { Pod } from "../types.ts";

export type PodOperation = "SET" | "ADD" | "UPDATE" | "REMOVE" | "DELETE" | "RECONCILE";

export interface PodUpdate {
  op: PodOperation;
  pods: Pod[];
  /** "file", "http" or "api". */
  source: string;
}
