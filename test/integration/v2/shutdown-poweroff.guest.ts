// Inside the v2 guest with systemd (run by shutdown.test.ts, not a test file itself): containerd +
// dist/bunlet with shutdownGracePeriod 30s / shutdownGracePeriodCriticalPods 20s and two static pods —
// "regular" (ignores SIGTERM) and "critical" (system-node-critical, exits on SIGTERM) — whose
// containers log their start and SIGTERM with the guest's uptime into OUT (a host directory shared
// with -w). bunlet is in API-server mode against the in-process API-server double, so the Node's
// Ready condition is seen too. Then `systemctl poweroff`; this script keeps logging /pods and Node
// Ready snapshots into OUT until systemd stops it. Everything the host checks is in OUT afterwards.
//   bun test/integration/v2/shutdown-poweroff.guest.ts OUT
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Pod } from "../../../src/pod/types.ts";
import { writeStaticPodConfig } from "../../support/agent.ts";
import { BINARY, freePort, pollUntil } from "../../support/binary.ts";
import { acquireContainerd } from "../../support/containerd.ts";
import { startApiServer } from "../../support/apiserver/index.ts";

const out = process.argv[2];
if (!out) throw new Error("usage: shutdown-poweroff.guest.ts OUT");
const uptime = () => readFileSync("/proc/uptime", "utf8").split(" ")[0]!;
const note = (what: string) => appendFileSync(join(out, "scenario.log"), `${what} ${uptime()}\n`);

/** A container that logs start and TERM (with /proc/uptime) to OUT/<name>.log; `onTerm` after logging. */
function manifest(name: string, image: string, onTerm: string, extraSpec: string): string {
  const script = `log() { read up _ </proc/uptime; echo "$1 $up" >>/out/${name}.log; }; trap 'log TERM; ${onTerm}' TERM; log start; while :; do sleep 1 & wait $!; done`;
  return `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 60
${extraSpec}  containers:
    - name: main
      image: ${image}
      command: ["sh", "-c", ${JSON.stringify(script)}]
      volumeMounts: [{ name: out, mountPath: /out }]
  volumes:
    - name: out
      hostPath: { path: ${out}, type: Directory }
`;
}

note("scenario-start");
const ctd = await acquireContainerd();
const base = "/tmp/bunlet-shutdown";
const manifests = join(base, "manifests");
mkdirSync(manifests, { recursive: true });
const port = freePort();
writeFileSync(join(manifests, "regular.yaml"), manifest("regular", ctd.images.busybox, "", ""));
writeFileSync(join(manifests, "critical.yaml"), manifest("critical", ctd.images.busybox, "exit 0", "  priorityClassName: system-node-critical\n"));
const config = writeStaticPodConfig(
  join(base, "config.yaml"),
  { manifests, cgroupRoot: "/bunlet-shutdown", endpoint: ctd.endpoint, port, podLogsDir: join(base, "pods") },
  ["shutdownGracePeriod: 30s", "shutdownGracePeriodCriticalPods: 20s"],
);
const api = await startApiServer({ storage: "memory" });
const kubeconfig = join(base, "kubelet.kubeconfig");
await api.writeKubeconfig(kubeconfig, { ...(await api.issueClientCert("system:node:guest", ["system:nodes"])), user: "kubelet" });
const ready = async () => {
  const c = (await api.store.get("nodes//guest"))?.status?.conditions?.find((x: { type: string }) => x.type === "Ready");
  return c ? { status: c.status, reason: c.reason, message: c.message } : undefined;
};
note("apiserver-up");
const proc = Bun.spawn([BINARY, `--config=${config}`, `--root-dir=${join(base, "root")}`, "--hostname-override=guest", `--kubeconfig=${kubeconfig}`, "-v=2"], {
  stdout: Bun.file(join(out, "bunlet.log")),
  stderr: Bun.file(join(out, "bunlet.err.log")),
  env: { ...process.env, NO_COLOR: "1" },
});
note(`bunlet-pid-${proc.pid}`);

// API-server mode: the main port is TLS (self-signed) with webhook authn/authz; the double's admin token passes both.
const pods = async () =>
  (
    (await (
      await fetch(`https://127.0.0.1:${port}/pods`, { headers: { authorization: `Bearer ${api.adminToken}` }, tls: { rejectUnauthorized: false } })
    ).json()) as { items: Pod[] }
  ).items;
const started = (name: string) => {
  try {
    return readFileSync(join(out, `${name}.log`), "utf8").includes("start ");
  } catch {
    return false;
  }
};
await pollUntil(async () => started("regular") && started("critical"), "both pods' containers started", 240_000, 250);
const lockTaken = () =>
  readFileSync(join(out, "bunlet.log"), "utf8").includes("Shutdown inhibitor lock taken") ||
  readFileSync(join(out, "bunlet.err.log"), "utf8").includes("Shutdown inhibitor lock taken");
await pollUntil(lockTaken, "bunlet's logind inhibitor", 60_000, 250);
const inhibitors = Bun.spawnSync(["systemd-inhibit", "--list", "--no-pager"], { stdout: "pipe" }).stdout.toString();
writeFileSync(join(out, "inhibitors.txt"), inhibitors);
try {
  writeFileSync(join(out, "99-kubelet.conf"), readFileSync("/etc/systemd/logind.conf.d/99-kubelet.conf"));
} catch (e) {
  note(`no-drop-in ${(e as Error).message.replace(/\s+/g, "_")}`);
}

appendFileSync(join(out, "node.jsonl"), `${JSON.stringify({ uptime: uptime(), when: "before", ready: await ready().catch(() => undefined) })}\n`);
note("poweroff");
const off = Bun.spawnSync(["systemctl", "poweroff"], { stdout: "pipe", stderr: "pipe" });
note(`poweroff-returned-${off.exitCode}`);

// A pod that comes while the node shuts down is refused (NodeShutdown); snapshots until the end.
let late = false;
for (;;) {
  try {
    const items = await pods();
    appendFileSync(join(out, "node.jsonl"), `${JSON.stringify({ uptime: uptime(), when: "after", ready: await ready().catch(() => undefined) })}\n`);
    appendFileSync(
      join(out, "pods.jsonl"),
      `${JSON.stringify({ uptime: uptime(), pods: items.map((p) => ({ name: p.metadata.name, phase: p.status?.phase, reason: p.status?.reason, message: p.status?.message })) })}\n`,
    );
    if (!late && readFileSync(join(out, "regular.log"), "utf8").includes("TERM")) {
      writeFileSync(join(manifests, "late.yaml"), manifest("late", ctd.images.busybox, "exit 0", ""));
      note("late-manifest");
      late = true;
    }
  } catch (e) {
    note(`pods-error ${(e as Error).message.replace(/\s+/g, "_")}`);
  }
  await Bun.sleep(500);
}
