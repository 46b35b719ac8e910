// vs-kubelet.ts figure 7: boots the cgroup v2 guest (scripts/host/v2-guest.sh --systemd, one CPU, User-mode
// Linux) and runs vs-kubelet-guest.ts there — figures 1, 2 and 5 for the kubelet and bunlet, each with
// cgroupDriver systemd — with the repository and an output directory shared read-write, then reads its
// result line (guest-table.ts). The guest's progress streams to stderr as it runs.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { bunInGuestCommand, REPO } from "../../../test/support/v2-guest.ts";
import { type GuestResult, parseGuestOutput } from "./guest-table.ts";

export interface GuestFigureOptions {
  bunlet: string;
  kubelet: string;
  /** Pods of figures 1 and 2 in the guest. */
  pods: number;
  windowS: number;
  settleS: number;
  /** Ramps per mode of figure 5. */
  runs: number;
  /** Guest memory, MiB. */
  memoryMiB: number;
  /** The whole guest run's limit, s. */
  timeoutS: number;
  /** Figures to run in the guest, among 1, 2, 5. */
  figures: number[];
  /** Concurrencies of the bare-CRI floor (0: all the pods at once). */
  floor: number[];
  /** Where the guest leaves agents' logs (shared read-write). */
  out: string;
  /** The upstream control plane's binaries, for figure 5. */
  binDir?: string;
}

/** Runs the guest side of figure 7; resolves with its result or rejects with the guest's exit and last output. */
export async function guestFigures(o: GuestFigureOptions): Promise<GuestResult> {
  mkdirSync(o.out, { recursive: true });
  const args = [
    join(REPO, "scripts/bench/vs-kubelet-guest.ts"),
    `--kubelet=${o.kubelet}`,
    `--bunlet=${o.bunlet}`,
    `--pods=${o.pods}`,
    `--window=${o.windowS}`,
    `--settle=${o.settleS}`,
    `--runs=${o.runs}`,
    `--only=${o.figures.join(",")}`,
    `--floor=${o.floor.join(",")}`,
    `--out=${o.out}`,
    ...(o.binDir ? [`--bin-dir=${o.binDir}`] : []),
  ];
  const guest = [join(REPO, "scripts/host/v2-guest.sh"), "--systemd", "-m", String(o.memoryMiB), "-t", String(o.timeoutS), "-w", REPO, "-w", o.out];
  const child = Bun.spawn(["bash", ...guest, "--", ...bunInGuestCommand(args)], { cwd: REPO, stdout: "pipe", stderr: "inherit", stdin: "ignore" });
  const [stdout, code] = await Promise.all([new Response(child.stdout).text(), child.exited]);
  try {
    return parseGuestOutput(stdout);
  } catch (e) {
    throw new Error(`v2-guest.sh exited ${code}: ${(e as Error).message}; its stdout ended: ${stdout.slice(-400)}`);
  }
}
