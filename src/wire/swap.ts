// failSwapOn (upstream cm.NewContainerManager + util/swap.IsSwapOn): with swap enabled the kubelet
// refuses to start unless failSwapOn is false. Swap is on when /proc/swaps lists anything below its
// header line.
import { readFileSync } from "node:fs";
import { kv, log } from "../log.ts";

export const PROC_SWAPS = "/proc/swaps";

/** Pure: the /proc/swaps lines (header included) when swap is on, undefined when it is off. */
export function swapLines(procSwaps: string): string[] | undefined {
  const lines = procSwaps.trim().split("\n");
  return lines.length > 1 ? lines : undefined;
}

/**
 * Pure: the error that stops the agent, or undefined. The text is upstream's; the /proc/swaps content
 * is appended as older kubelets did, so the operator sees which device is on.
 */
export function swapCheck(procSwaps: string, failSwapOn: boolean): string | undefined {
  const lines = swapLines(procSwaps);
  if (!lines || !failSwapOn) return undefined;
  return `running with swap on is not supported, please disable swap or set --fail-swap-on flag to false. ${PROC_SWAPS} contained: [${lines.join(" ")}]`;
}

/**
 * Reads /proc/swaps and applies swapCheck; logs "Swap is on" like upstream whenever it is. A kernel
 * without swap support has no /proc/swaps: swap is off.
 */
export function checkSwap(failSwapOn: boolean, read: (path: string) => string = (p) => readFileSync(p, "utf8")): string | undefined {
  let text: string;
  try {
    text = read(PROC_SWAPS);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    return `failed to determine if swap is on: ${(e as Error).message}`;
  }
  const lines = swapLines(text);
  if (lines)
    log.info(
      `Swap is on ${kv({
        failSwapOn,
        procSwaps: lines
          .slice(1)
          .map((l) => l.split(/\s+/)[0])
          .join(","),
      })}`,
    );
  return swapCheck(text, failSwapOn);
}
