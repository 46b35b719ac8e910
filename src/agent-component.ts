// The contract between the composition root (agent.ts) and the long-running parts it starts and
// stops in order. Its own module so the parts that wire/ builds can name it without importing agent.ts.

/** A long-running part of the agent (pod workers, eviction manager, …). */
export interface AgentComponent {
  name: string;
  start(): void | Promise<void>;
  /** Must return promptly: the whole agent has 2 s to shut down. */
  stop(): void | Promise<void>;
}
