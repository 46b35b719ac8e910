// /stats/summary and /metrics/cadvisor of dist/bunlet on a real cgroup v2 kernel: node memory (from
// the root memory.stat), the "pods" system container (kubepods' memory.current, availableBytes against
// node allocatable), and for every pod — Guaranteed, Burstable, BestEffort — memory (usage, working
// set, rss, faults), cpu, process count and its container's memory. Runs where /sys/fs/cgroup is a
// cgroup2 mount (the v2 guest via in-guest.test.ts); skips on a v1 host.
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Summary } from "../../../src/stats/summary.ts";
import { pollUntil } from "../../support/binary.ts";
import { guestGate, memTotalBytes, MiB, useGuestNode } from "../../support/guest-node.ts";
import { staticPodYaml } from "../../support/manifests.ts";

const onV2 = guestGate("cgroup2", "cgroup v2 stats tests");

const SLEEP = ["sh", "-c", "exec sleep 3600"];
/** Each pod holds some anonymous memory (a shell variable) so its working set is well above zero. */
const HOLD = ["sh", "-c", "x=$(yes | head -c 4000000); sleep 3600"];

describe.skipIf(!onV2)("stats on cgroup v2 (containerd, runc, real kernel)", () => {
  const n = useGuestNode({ name: "v2-stats", node: "v2s" });
  const node = n.node;

  test("node, the pods system container and every pod have complete memory and cpu stats", async () => {
    const pods = {
      guaranteed: "      resources: { limits: { memory: 48Mi, cpu: 100m } }\n",
      burstable: "      resources: { requests: { memory: 16Mi } }\n",
      besteffort: "",
    };
    for (const [name, container] of Object.entries(pods)) {
      writeFileSync(
        join(n.manifests, `${name}.yaml`),
        staticPodYaml(name, { image: n.ctd.images.busybox, command: name === "besteffort" ? SLEEP : HOLD, terminationGracePeriodSeconds: 1, container }),
      );
    }
    await n.start([...n.flags(), "--file-check-frequency=1s", "--system-reserved=memory=200Mi"]);
    const summary = () => n.get<Summary>("/stats/summary");
    const names = Object.keys(pods).map((p) => `${p}-${node}`);
    // Running pods with their containers listed by the runtime (the CRI listing is cached ~2 s).
    let s = await summary();
    await pollUntil(
      async () => {
        s = await summary();
        return names.every((p) => (s.pods.find((x) => x.podRef.name === p)?.containers?.[0]?.memory?.workingSetBytes ?? 0) > 0);
      },
      "every pod and its container with memory in /stats/summary",
      120_000,
      250,
    );

    const memTotal = memTotalBytes();
    const m = s.node.memory!;
    expect(m.usageBytes!).toBeGreaterThan(0);
    expect(m.workingSetBytes!).toBeGreaterThan(0);
    expect(m.workingSetBytes!).toBeLessThanOrEqual(m.usageBytes!);
    expect(m.rssBytes!).toBeGreaterThan(0);
    expect(m.availableBytes).toBe(memTotal - m.workingSetBytes!);
    expect(s.node.cpu?.usageCoreNanoSeconds ?? 0).toBeGreaterThan(0);

    const podsContainer = s.node.systemContainers?.find((c) => c.name === "pods");
    expect(podsContainer?.memory?.workingSetBytes ?? 0).toBeGreaterThan(0);
    expect(podsContainer!.memory!.availableBytes).toBe(memTotal - 200 * MiB - podsContainer!.memory!.workingSetBytes!);
    expect(podsContainer?.cpu?.usageCoreNanoSeconds ?? 0).toBeGreaterThan(0);

    for (const name of names) {
      const ps = s.pods.find((x) => x.podRef.name === name)!;
      const pm = ps.memory!;
      expect({
        pod: name,
        ws: pm.workingSetBytes! > 0,
        usage: pm.usageBytes! >= pm.workingSetBytes!,
        rss: pm.rssBytes !== undefined,
        faults: pm.pageFaults !== undefined,
      }).toEqual({ pod: name, ws: true, usage: true, rss: true, faults: true });
      expect(ps.cpu?.usageCoreNanoSeconds ?? 0).toBeGreaterThan(0);
      expect(ps.process_stats?.process_count ?? 0).toBeGreaterThanOrEqual(1);
      expect(ps.containers?.map((c) => c.name)).toEqual(["main"]);
    }
    const g = s.pods.find((x) => x.podRef.name === `guaranteed-${node}`)!;
    // A limited pod cgroup reports what is left below its memory.max.
    expect(g.memory!.availableBytes).toBe(48 * MiB - g.memory!.workingSetBytes!);
    expect(s.pods.find((x) => x.podRef.name === `besteffort-${node}`)!.memory!.availableBytes).toBeUndefined();

    // /metrics/cadvisor carries the same pods' memory.
    const metrics = await (await fetch(`http://127.0.0.1:${n.port}/metrics/cadvisor`)).text();
    for (const name of names) expect(metrics).toMatch(new RegExp(`^container_memory_working_set_bytes\\{[^}]*pod="${name}"[^}]*\\} [1-9]`, "m"));
  }, 300_000);
});
