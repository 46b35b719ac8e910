// Scenario (e): disk pressure on a small tmpfs that holds everything bunlet counts as nodefs — its
// root dir (emptyDir volumes), the pod logs and the containerd root (images, writable layers) of a
// containerd of its own. A pod fills its emptyDir past the hard nodefs.available threshold. bunlet
// must first reclaim at node level (container GC, then image GC: the unused memhog image goes) and,
// since that is not enough, evict the pod filling the disk.
//   bun scripts/chaos/disk-pressure.ts
import { statfsSync } from "node:fs";
import { join } from "node:path";
import { cli, containerFingerprint, isEvicted, isRunning, MIB, type Harness, type Scenario } from "./lib.ts";

const FS_MIB = 192;
/** Threshold: crossed once pods have written this much beyond what is used at start. */
const CROSS_AFTER_MIB = 60;

const availableBytes = (path: string) => {
  const s = statfsSync(path);
  return s.bavail * s.bsize;
};

export const diskPressure: Scenario = {
  name: "disk-pressure",
  description: `pod fills a ${FS_MIB} MiB tmpfs nodefs/imagefs past nodefs.available → image GC first, then that pod evicted`,
  async run(h: Harness) {
    const fs = h.mountTmpfs(FS_MIB);
    const rt = await h.usePrivateContainerd(join(fs, "containerd"));
    const imagesBefore = (await rt.cri.listImages()).flatMap((i) => i.repoTags);
    h.say(`private containerd on the tmpfs; images ${imagesBefore.join(", ")}`);
    const avail0 = availableBytes(fs);
    const threshold = Math.floor((avail0 - CROSS_AFTER_MIB * MIB) / MIB);
    h.say(`tmpfs ${FS_MIB} MiB, ${(avail0 / MIB).toFixed(0)} MiB available → nodefs.available<${threshold}Mi`);

    h.addPod("steady", { command: ["sh", "-c", "exec sleep 2147483647"], requests: { cpu: "50m", memory: "32Mi" }, limits: { cpu: "50m", memory: "32Mi" } });
    await h.start({
      allocatableBytes: 1024 * MIB,
      rootDir: join(fs, "kubelet"),
      config: {
        podLogsDir: join(fs, "logs"),
        evictionHard: { "nodefs.available": `${threshold}Mi`, "memory.available": "100Mi" },
      },
    });
    const steadyBefore = containerFingerprint(await h.pod("steady"));
    // 1 MiB every 20 ms while more than 8 MiB are free, and again whenever space comes back: whatever
    // image GC gives back (the private containerd holds every local image) the pod takes, so only
    // evicting it relieves the disk.
    h.addPod("filler", {
      command: [
        "sh",
        "-c",
        "i=0; while :; do if [ $(df -k /scratch | awk 'NR==2{print $4}') -gt 8192 ]; then dd if=/dev/zero of=/scratch/f$i bs=1M count=1 2>/dev/null; i=$((i+1)); sleep 0.02; else sleep 0.1; fi; done",
      ],
      emptyDir: "/scratch",
    });
    await h.waitRunning(["filler"]);
    await h.waitFor("the disk to cross the threshold", () => availableBytes(fs) < threshold * MIB, 20_000, 50);
    h.say(`disk over the threshold: ${(availableBytes(fs) / MIB).toFixed(0)} MiB available`);
    await h.waitFor("the filler to be evicted", async () => isEvicted(await h.pod("filler")), 40_000, 100);
    h.say("filler evicted");
    const steady = await h.pod("steady");
    h.check("steady kept running", isRunning(steady) && containerFingerprint(steady) === steadyBefore, containerFingerprint(steady));
    h.say(`after the eviction: ${(availableBytes(fs) / MIB).toFixed(0)} MiB available (threshold ${threshold} MiB)`);
    // The trace record is written once the signal recovers; the evicted pod's emptyDir is not
    // removed here, so the disk stays over the threshold: an orderly stop writes the open record.
    // /pods can say Evicted before the harness has read the log lines written just before it (the
    // guest's pipes lag): wait for the eviction's own line, then judge what came before it.
    const evictLine = new RegExp(`evicting pod=default/${h.podName("filler")}`);
    const log = await h.waitFor(
      "bunlet's 'evicting' log line",
      () => {
        const text = h.bunlet?.stderr() ?? "";
        return evictLine.test(text) ? text : undefined;
      },
      5_000,
      20,
    );
    await h.stopBunlet("SIGTERM");
    const rec = await h.waitFor("the eviction trace record", () => h.trace()[0], 5_000);

    const reclaimAt = log.search(/node-level reclaim done steps=deleteUnusedContainers,deleteUnusedImages relieved=false/);
    const evictAt = log.search(evictLine);
    h.check(
      "node-level reclaim (container GC, image GC) ran before the eviction",
      reclaimAt >= 0 && evictAt > reclaimAt,
      reclaimAt >= 0
        ? log.slice(reclaimAt).split("\n")[0]!.trim()
        : (log
            .split("\n")
            .find((l) => l.includes("node-level reclaim done"))
            ?.trim() ?? "no 'node-level reclaim done' line"),
    );
    const imagesAfter = (await rt.cri.listImages()).flatMap((i) => i.repoTags);
    h.check(
      "image GC removed the unused image and kept the ones in use",
      !imagesAfter.some((t) => t.includes("memhog")) && imagesAfter.some((t) => t.includes("busybox")) && imagesAfter.some((t) => t.includes("pause")),
      `before [${imagesBefore.join(", ")}] after [${imagesAfter.join(", ")}]`,
    );
    h.check(
      "the pod filling the disk was evicted for nodefs.available",
      h.trace().length === 1 && rec.pod === `default/${h.podName("filler")}` && rec.signal === "nodefs.available",
      `${h
        .trace()
        .map((r) => r.pod)
        .join(",")} signal=${rec.signal} observed=${rec.observed} threshold=${rec.threshold}`,
    );
    h.check("it was ranked first", rec.ranked[0]?.pod === rec.pod, rec.ranked.map((r) => `${r.pod}(${Math.round(r.usage / MIB)}Mi)`).join(","));
    h.check("DiskPressure reported", rec.nodeConditions.includes("DiskPressure"), `[${rec.nodeConditions.join(",")}]`);
  },
};

if (import.meta.main) await cli(diskPressure);
