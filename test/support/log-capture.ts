// The agent logger's lines as a test sees them: a consola reporter added for the test's duration.
import { log } from "../../src/log.ts";

export interface LogCapture {
  /** Every line logged since the capture began, one string each (the message, without the klog prefix). */
  readonly lines: string[];
  /** The lines so far, joined by newlines. */
  text(): string;
  stop(): void;
}

export function captureLog(): LogCapture {
  const lines: string[] = [];
  const reporter = { log: (o: { args: unknown[] }) => void lines.push(o.args.join(" ")) };
  log.addReporter(reporter);
  return { lines, text: () => lines.join("\n"), stop: () => log.removeReporter(reporter) };
}
