// The volume side of the test CSI driver (fake-csi-driver.ts): NodeStageVolume bind-mounts the volume's
// data directory (<dataDir>/<volume id>) at the staging path, NodePublishVolume bind-mounts the staged
// path (or the data directory when the volume was not staged) at the target path — read-only when asked
// — and the Unstage/Unpublish calls unmount them. Where a mount is refused (no CAP_SYS_ADMIN) a
// `.fake-csi` marker file stands in for it. Every call is recorded with its request — the `secrets`
// map the kubelet sent included, for tests to check — but for NodeGetVolumeStats, which answers the
// published path's statfs (bytes and inodes).
import { existsSync, mkdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { UnaryHandler } from "../../src/cri/grpc-server.ts";
import { mountPointsUnder } from "../../src/pod/volumes/mount-points.ts";

export interface NodeCall {
  method: "NodeStageVolume" | "NodeUnstageVolume" | "NodePublishVolume" | "NodeUnpublishVolume";
  request: Record<string, unknown>;
}

export interface FakeNodeVolumes {
  readonly calls: NodeCall[];
  /** The data directory of a volume ID. */
  dataDir(volumeId: string): string;
  /** The mounts this driver made and has not yet unmounted. */
  mounted(): string[];
  handlers(onCall: (method: string) => void): Record<string, UnaryHandler>;
  /** Unmounts what is left and removes the data directories. */
  cleanUp(): void;
}

const MARKER = ".fake-csi";

function run(cmd: string[]): boolean {
  return Bun.spawnSync(cmd, { stdout: "ignore", stderr: "ignore" }).exitCode === 0;
}

export function createFakeNodeVolumes(root: string): FakeNodeVolumes {
  const calls: NodeCall[] = [];
  const mounts = new Set<string>();
  const dataDir = (id: string) => join(root, id.replaceAll("/", "_"));

  /** A bind mount of source at target (read-only when asked), or the marker naming the source. */
  function bind(source: string, target: string, readOnly: boolean): void {
    mkdirSync(target, { recursive: true });
    if (mountPointsUnder(target).includes(target) || existsSync(join(target, MARKER))) return;
    if (run(["mount", "--bind", source, target])) {
      mounts.add(target);
      if (readOnly && !run(["mount", "-o", "remount,bind,ro", target])) throw new Error(`read-only remount of ${target} failed`);
      return;
    }
    writeFileSync(join(target, MARKER), source);
  }
  function unbind(target: string): void {
    if (mountPointsUnder(target).includes(target)) run(["umount", target]);
    mounts.delete(target);
    rmSync(join(target, MARKER), { force: true });
  }
  const str = (v: unknown) => String(v ?? "");
  const handler = (method: NodeCall["method"], onCall: (m: string) => void, act: (req: Record<string, unknown>) => void): UnaryHandler => ({
    request: `${method}Request`,
    response: `${method}Response`,
    call: (req) => {
      onCall(method);
      calls.push({ method, request: req });
      act(req);
      return {};
    },
  });

  return {
    calls,
    dataDir,
    mounted: () => [...mounts],
    handlers: (onCall) => ({
      NodeStageVolume: handler("NodeStageVolume", onCall, (req) => {
        const data = dataDir(str(req.volumeId));
        mkdirSync(data, { recursive: true });
        bind(data, str(req.stagingTargetPath), false);
      }),
      NodeUnstageVolume: handler("NodeUnstageVolume", onCall, (req) => unbind(str(req.stagingTargetPath))),
      NodePublishVolume: handler("NodePublishVolume", onCall, (req) => {
        const staging = str(req.stagingTargetPath);
        const data = dataDir(str(req.volumeId));
        mkdirSync(data, { recursive: true });
        bind(staging !== "" ? staging : data, str(req.targetPath), req.readonly === true);
      }),
      NodeUnpublishVolume: handler("NodeUnpublishVolume", onCall, (req) => {
        const target = str(req.targetPath);
        unbind(target);
        rmSync(target, { recursive: true, force: true });
      }),
      NodeGetVolumeStats: {
        request: "NodeGetVolumeStatsRequest",
        response: "NodeGetVolumeStatsResponse",
        call: (req) => {
          onCall("NodeGetVolumeStats");
          const s = statfsSync(str(req.volumePath));
          const bytes = { unit: "BYTES", total: s.blocks * s.bsize, available: s.bavail * s.bsize, used: (s.blocks - s.bfree) * s.bsize };
          return { usage: [bytes, { unit: "INODES", total: s.files, available: s.ffree, used: s.files - s.ffree }] };
        },
      },
    }),
    cleanUp() {
      for (const m of [...mounts].sort((a, b) => b.length - a.length)) unbind(m);
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** The source a marker names, when the driver could not mount (tests without mount rights). */
export const markerSource = (target: string) => (existsSync(join(target, MARKER)) ? readFileSync(join(target, MARKER), "utf8") : undefined);
