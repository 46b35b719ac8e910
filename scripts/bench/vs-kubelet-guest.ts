// vs-kubelet.ts figure 7, the part inside the cgroup v2 guest (scripts/host/v2-guest.sh --systemd; one
// CPU, User-mode Linux): figures 1 and 2 of the host — idle with 0 and with --pods pods, --pods marker
// manifests at once → first and all running, the bare-CRI floor — for the kubelet, then bunlet, each on a
// fresh scratch node with cgroupDriver systemd (cgroupRoot "/", containerd's runc with SystemdCgroup), as
// both would run on a systemd host; then the ramp of figure 5 (lib/guest-ramp.ts) where it can run.
// Started by lib/guest-figures.ts inside the guest, with /var/lib/bunlet on a tmpfs (containerd's overlayfs
// snapshotter cannot put its layers on the guest's overlay root):
//   bun scripts/bench/vs-kubelet-guest.ts --kubelet PATH --bunlet PATH [--pods N] [--window S] [--settle S]
//     [--runs N] [--only 1,2,5] [--out DIR]
// The UML kernel's /proc/cpuinfo has no "cpu MHz" line and the guest no cpufreq in sysfs: the kubelet's
// cAdvisor then refuses to start ("could not detect clock speed", machine.GetClockSpeed), so a copy of
// /proc/cpuinfo with such a line is bind-mounted over it first (givenClockSpeed). Progress goes to stderr; the result is one line on stdout, GUEST_RESULT_PREFIX and JSON (GuestResult,
// lib/guest-table.ts). Agents' logs of a failed start are left in --out.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { floorBurst, manifestBurst, measureIdle } from "./lib/agent-figures.ts";
import { guestRampFigure } from "./lib/guest-ramp.ts";
import { GUEST_RESULT_PREFIX, type GuestResult } from "./lib/guest-table.ts";
import { type AgentKind, createScratchNode } from "./lib/scratch-node.ts";
import type { AgentResult } from "./lib/vs-table.ts";

const { values } = parseArgs({
  options: {
    kubelet: { type: "string" },
    bunlet: { type: "string" },
    pods: { type: "string", default: "100" },
    window: { type: "string", default: "60" },
    settle: { type: "string", default: "10" },
    runs: { type: "string", default: "10" },
    only: { type: "string", default: "1,2,5" },
    floor: { type: "string", default: "4" },
    "bin-dir": { type: "string" },
    out: { type: "string", default: "/tmp" },
  },
});
const pods = Number(values.pods);
const windowS = Number(values.window);
const settleS = Number(values.settle);
const figures = new Set(values.only!.split(",").map(Number));
const binaries: Record<AgentKind, string> = { kubelet: values.kubelet!, bunlet: values.bunlet! };
const say = (s: string) => console.error(`vs-kubelet-guest: ${s}`);

/** Figures 1 and 2 of one agent on one node: idle with 0 pods, the burst, idle with `pods`. */
async function heavyRun(kind: AgentKind, r: AgentResult): Promise<void> {
  const sn = await createScratchNode(`vskg-${kind}`, { agent: kind, binary: binaries[kind], build: false, systemd: true });
  try {
    const agent = await sn.startAgent();
    if (figures.has(1)) r.idle0 = await measureIdle(agent.pid, windowS, settleS);
    say(`${kind}: idle with 0 pods ${JSON.stringify(r.idle0 ?? {})}`);
    r.burst = await manifestBurst(sn, pods);
    say(`${kind}: ${pods} manifests at once ${JSON.stringify(r.burst)}`);
    if (figures.has(1)) r.idle100 = await measureIdle(sn.agent!.pid, windowS, settleS);
    say(`${kind}: idle with ${pods} pods ${JSON.stringify(r.idle100 ?? {})}`);
  } catch (e) {
    const reason = (e as Error).message.split("\n")[0]!;
    r.errors.push(`${kind}, figures 1 and 2: ${reason}`);
    if (!r.idle0 && !r.burst) result.skipped.push({ figure: `1 and 2, ${kind}`, reason: agentError(sn.agent?.stderr()) ?? reason });
    say(`${kind} failed: ${(e as Error).message}`);
    writeFileSync(join(values.out!, `vs-kubelet-guest-${kind}.log`), sn.agent?.stderr() ?? "");
  } finally {
    await sn.cleanup();
  }
}

/**
 * /proc/cpuinfo with a "cpu MHz" line (the one thing cAdvisor's GetClockSpeed looks for there), bind-mounted
 * over the guest's own: a throw-away guest, and bunlet does not read it.
 */
function givenClockSpeed(): void {
  const cpuinfo = readFileSync("/proc/cpuinfo", "utf8");
  if (/^cpu MHz/m.test(cpuinfo)) return;
  const copy = "/run/vs-kubelet-guest-cpuinfo";
  writeFileSync(copy, cpuinfo.replace(/^(processor\s*:.*)$/gm, "$1\ncpu MHz\t\t: 1000.000"));
  const r = Bun.spawnSync(["mount", "--bind", copy, "/proc/cpuinfo"], { stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`mount --bind ${copy} /proc/cpuinfo: ${r.stderr.toString().trim()}`);
  say('/proc/cpuinfo given a "cpu MHz" line (for the kubelet\'s cAdvisor)');
}

/** The agent's own last error line (klog "E…" or bunlet's "ERROR"), the reason it could not run. */
function agentError(stderr: string | undefined): string | undefined {
  const line = stderr
    ?.split("\n")
    .filter((l) => /^E\d{4} |ERROR|error:/.test(l))
    .at(-1);
  return line?.replace(/^E\d{4} [\d:.]+\s+\d+ \S+\] /, "").slice(0, 300);
}

/** Figure 5 (lib/guest-ramp.ts): each mode's series, and a skipped row for a mode that could not run at all. */
async function rampFigure(binDir: string): Promise<void> {
  const ramp = await guestRampFigure({ binDir, bunlet: binaries.bunlet, kubelet: binaries.kubelet, runs: Number(values.runs), say });
  result.kubelet.ramp = ramp["kubelet-notify"];
  result.kubelet.rampPeriodic = ramp["kubelet-periodic"];
  result.bunlet.ramp = ramp.bunlet;
  for (const [mode, s] of Object.entries(ramp)) {
    (mode === "bunlet" ? result.bunlet : result.kubelet).errors.push(...s.errors);
    if (s.runs.length === 0) result.skipped.push({ figure: `5. memory ramp, ${mode}`, reason: s.errors[0] ?? "no run" });
  }
}

givenClockSpeed();
const result: GuestResult = {
  pods,
  kubelet: { podStartMs: [], errors: [] },
  bunlet: { podStartMs: [], errors: [] },
  floor: {},
  floorErrors: [],
  skipped: [],
  context: {},
};
if (figures.has(1) || figures.has(2)) {
  for (const kind of ["kubelet", "bunlet"] as const) await heavyRun(kind, result[kind]);
  if (figures.has(2))
    for (const c of values.floor!.split(",").map(Number))
      await floorBurst("vskg-floor", pods, c === 0 ? pods : c, { floor: result.floor, errors: result.floorErrors, say }, true);
}
if (figures.has(5))
  await rampFigure(values["bin-dir"]!).catch((e: Error) => result.skipped.push({ figure: "5. memory ramp", reason: e.message.split("\n")[0]! }));
result.context = { kernel: (await Bun.$`uname -r`.text()).trim(), memTotal: (await Bun.$`grep MemTotal /proc/meminfo`.text()).trim() };
console.log(`${GUEST_RESULT_PREFIX}${JSON.stringify(result)}`);
