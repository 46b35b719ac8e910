// Block I/O of one cgroup per device, the figures behind cAdvisor's container_fs_reads_bytes_total,
// container_fs_writes_bytes_total, container_fs_reads_total and container_fs_writes_total:
//   v2: io.stat, one line per device: "MAJ:MIN rbytes=… wbytes=… rios=… wios=… dbytes=… dios=…";
//   v1: blkio.throttle.io_service_bytes (bytes) and blkio.throttle.io_serviced (operations), lines
//       "MAJ:MIN Read|Write|Sync|Async|Discard|Total N" and a last "Total N".
// The device is named as cAdvisor names it, /dev/<DEVNAME> from /sys/dev/block/MAJ:MIN/uevent.
import { readFileSync } from "node:fs";
import { join } from "node:path";

export interface DeviceIo {
  /** "MAJ:MIN" */
  device: string;
  readBytes: number;
  writeBytes: number;
  reads: number;
  writes: number;
}

export class IoStatsError extends Error {
  override name = "IoStatsError";
}

const DEVICE = /^\d+:\d+$/;
const COUNTERS = new Set(["rbytes", "wbytes", "rios", "wios"]);

/** Pure: a v2 io.stat → per-device counters (devices without rbytes/wbytes/rios/wios count 0 for them). */
export function parseIoStat(text: string, where = "io.stat"): DeviceIo[] {
  const out: DeviceIo[] = [];
  for (const line of text.split("\n")) {
    const [dev, ...pairs] = line.trim().split(/\s+/);
    if (!dev) continue;
    if (!DEVICE.test(dev)) throw new IoStatsError(`${where}: ${JSON.stringify(line)} does not start with MAJ:MIN`);
    const kv: Record<string, number> = {};
    for (const p of pairs) {
      const m = /^([a-z0-9._]+)=(\S+)$/.exec(p);
      if (!m) throw new IoStatsError(`${where}: ${JSON.stringify(p)} in ${JSON.stringify(line)} is not key=value`);
      // iocost/iolatency add keys of their own (cost.usage=…, avg_lat=…): only the four counters must be integers.
      if (!COUNTERS.has(m[1]!)) continue;
      if (!/^\d+$/.test(m[2]!)) throw new IoStatsError(`${where}: ${JSON.stringify(p)} in ${JSON.stringify(line)} is not an integer counter`);
      kv[m[1]!] = Number(m[2]);
    }
    out.push({ device: dev, readBytes: kv.rbytes ?? 0, writeBytes: kv.wbytes ?? 0, reads: kv.rios ?? 0, writes: kv.wios ?? 0 });
  }
  return out;
}

/** Pure: "MAJ:MIN Op N" lines → device → op → N (the trailing "Total N" line is dropped). */
function parseBlkioLines(text: string, where: string): Map<string, Record<string, number>> {
  const out = new Map<string, Record<string, number>>();
  for (const line of text.split("\n")) {
    const f = line.trim().split(/\s+/);
    if (f.length === 1 && f[0] === "") continue;
    if (f[0] === "Total" && f.length === 2) continue;
    if (f.length !== 3 || !DEVICE.test(f[0]!) || !/^\d+$/.test(f[2]!)) throw new IoStatsError(`${where}: ${JSON.stringify(line)} is not "MAJ:MIN Op N"`);
    const ops = out.get(f[0]!) ?? {};
    ops[f[1]!] = Number(f[2]);
    out.set(f[0]!, ops);
  }
  return out;
}

/** Pure: v1 blkio.throttle.io_service_bytes + io_serviced → per-device counters. */
export function parseBlkio(serviceBytes: string, serviced: string, where = "blkio"): DeviceIo[] {
  const bytes = parseBlkioLines(serviceBytes, `${where}/blkio.throttle.io_service_bytes`);
  const ops = parseBlkioLines(serviced, `${where}/blkio.throttle.io_serviced`);
  const devices = [...new Set([...bytes.keys(), ...ops.keys()])];
  return devices.map((device) => {
    const b = bytes.get(device) ?? {};
    const o = ops.get(device) ?? {};
    return { device, readBytes: b.Read ?? 0, writeBytes: b.Write ?? 0, reads: o.Read ?? 0, writes: o.Write ?? 0 };
  });
}

/** The cgroup's block I/O: `dir` is its v2 directory or its v1 blkio directory. */
export function readCgroupIo(version: 1 | 2, dir: string): DeviceIo[] {
  if (version === 2) return parseIoStat(readFileSync(join(dir, "io.stat"), "utf8"), join(dir, "io.stat"));
  const read = (f: string) => readFileSync(join(dir, f), "utf8");
  return parseBlkio(read("blkio.throttle.io_service_bytes"), read("blkio.throttle.io_serviced"), dir);
}

/** Pure: DEVNAME from a /sys/dev/block/MAJ:MIN/uevent text. */
export function devnameFromUevent(text: string): string | undefined {
  return /^DEVNAME=(.+)$/m.exec(text)?.[1]?.trim() || undefined;
}

/** "/dev/sda" for "8:0" as cAdvisor labels it; the MAJ:MIN itself when sysfs does not know it. Cached. */
export function createDeviceNamer(sysDevBlock = "/sys/dev/block"): (device: string) => string {
  const names = new Map<string, string>();
  return (device) => {
    let n = names.get(device);
    if (n === undefined) {
      let devname: string | undefined;
      try {
        devname = devnameFromUevent(readFileSync(join(sysDevBlock, device, "uevent"), "utf8"));
      } catch {}
      n = devname ? `/dev/${devname}` : device;
      names.set(device, n);
    }
    return n;
  };
}
