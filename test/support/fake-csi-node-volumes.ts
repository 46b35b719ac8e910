// The volume side of the test CSI driver (fake-csi-driver.ts): NodeStageVolume bind-mounts the volume's
// data directory (<dataDir>/<volume id>) at the staging path, NodePublishVolume bind-mounts the staged
// path (or the data directory when the volume was not staged) at the target path — read-only when asked
// — and the Unstage/Unpublish calls unmount them. Where a mount is refused (no CAP_SYS_ADMIN) a
// `.fake-csi` marker file stands in for it. Every call is recorded with its request — the `secrets`
// map the kubelet sent included, for tests to check — but for NodeGetVolumeStats, which answers the
// published path's statfs (bytes and inodes), or a block device's size alone (bytes in total). A volume asked for with the `block` access type is a loop
// device over a sparse file (<dataDir>/<volume id>.img), attached at its first NodeStage or NodePublish:
// NodePublishVolume bind-mounts the device on a file at the target path, NodeUnstageVolume detaches it.
import { existsSync, mkdirSync, readFileSync, rmSync, statfsSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
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
  /** The loop devices of block volumes still attached, by volume ID. */
  loopDevices(): Map<string, string>;
  /** The file behind a block volume's loop device. */
  blockImage(volumeId: string): string;
  handlers(onCall: (method: string) => void): Record<string, UnaryHandler>;
  /** Unmounts what is left, detaches the loop devices and removes the data directories. */
  cleanUp(): void;
}

const MARKER = ".fake-csi";
/** The size of a block volume's sparse file. */
export const BLOCK_BYTES = 16 << 20;

function run(cmd: string[]): boolean {
  return Bun.spawnSync(cmd, { stdout: "ignore", stderr: "ignore" }).exitCode === 0;
}

export function createFakeNodeVolumes(root: string): FakeNodeVolumes {
  const calls: NodeCall[] = [];
  const mounts = new Set<string>();
  const dataDir = (id: string) => join(root, id.replaceAll("/", "_"));
  const loops = new Map<string, string>();
  const blockImage = (id: string) => `${dataDir(id)}.img`;
  const isBlock = (req: Record<string, unknown>) => (req.volumeCapability as { block?: unknown } | undefined)?.block != null;

  /** The volume's loop device, attached over its sparse file on first use. */
  function loopDevice(id: string): string {
    const known = loops.get(id);
    if (known) return known;
    mkdirSync(root, { recursive: true });
    if (!existsSync(blockImage(id))) writeFileSync(blockImage(id), "");
    truncateSync(blockImage(id), BLOCK_BYTES);
    const r = Bun.spawnSync(["losetup", "--find", "--show", blockImage(id)]);
    if (r.exitCode !== 0) throw new Error(`losetup of ${blockImage(id)} failed: ${r.stderr.toString().trim()}`);
    const dev = r.stdout.toString().trim();
    loops.set(id, dev);
    return dev;
  }
  function detachLoop(id: string): void {
    const dev = loops.get(id);
    if (dev) run(["losetup", "-d", dev]);
    loops.delete(id);
  }
  /** The block device bind-mounted on a file at target, as CSI drivers publish a raw block volume. */
  function publishBlock(id: string, target: string, readOnly: boolean): void {
    if (mountPointsUnder(target).includes(target)) return;
    const dev = loopDevice(id);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, "");
    if (!run(["mount", "--bind", dev, target])) throw new Error(`bind mount of ${dev} at ${target} failed`);
    mounts.add(target);
    if (readOnly && !run(["mount", "-o", "remount,bind,ro", target])) throw new Error(`read-only remount of ${target} failed`);
  }

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
    if (existsSync(join(target, MARKER))) rmSync(join(target, MARKER));
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
    loopDevices: () => new Map(loops),
    blockImage,
    handlers: (onCall) => ({
      NodeStageVolume: handler("NodeStageVolume", onCall, (req) => {
        if (isBlock(req)) return void loopDevice(str(req.volumeId));
        const data = dataDir(str(req.volumeId));
        mkdirSync(data, { recursive: true });
        bind(data, str(req.stagingTargetPath), false);
      }),
      NodeUnstageVolume: handler("NodeUnstageVolume", onCall, (req) => {
        unbind(str(req.stagingTargetPath));
        detachLoop(str(req.volumeId));
      }),
      NodePublishVolume: handler("NodePublishVolume", onCall, (req) => {
        if (isBlock(req)) return publishBlock(str(req.volumeId), str(req.targetPath), req.readonly === true);
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
          if (statSync(str(req.volumePath)).isBlockDevice()) return { usage: [{ unit: "BYTES", total: BLOCK_BYTES, available: 0, used: 0 }] };
          const s = statfsSync(str(req.volumePath));
          const bytes = { unit: "BYTES", total: s.blocks * s.bsize, available: s.bavail * s.bsize, used: (s.blocks - s.bfree) * s.bsize };
          return { usage: [bytes, { unit: "INODES", total: s.files, available: s.ffree, used: s.files - s.ffree }] };
        },
      },
    }),
    cleanUp() {
      for (const m of [...mounts].sort((a, b) => b.length - a.length)) unbind(m);
      for (const id of [...loops.keys()]) detachLoop(id);
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** The source a marker names, when the driver could not mount (tests without mount rights). */
export const markerSource = (target: string) => (existsSync(join(target, MARKER)) ? readFileSync(join(target, MARKER), "utf8") : undefined);
