// Test doubles for the pod cgroup manager: fake cgroup mounts in a temporary directory, removed after
// each test, and a stand-in for systemd that records the units asked for.
import { afterEach } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cgroupDirPath } from "../../../src/pod/cgroups-config.ts";
import type { SystemdUnits } from "../../../src/pod/systemd-dbus.ts";
import type { TransientUnit } from "../../../src/pod/systemd-slices.ts";

/** A container with these requests and limits, for makePod. */
export const res = (requests?: Record<string, string>, limits?: Record<string, string>) => ({ name: "c", image: "x", resources: { requests, limits } });

/** Fake mounts for the tests of one file: `v1` a directory per controller, `v2` a unified root; `read` a file below the last one made. */
export function useFakeMounts() {
  let root = "";
  afterEach(() => {
    if (root) rmSync(root, { recursive: true, force: true });
    root = "";
  });
  const make = (kind: string) => (root = mkdtempSync(join(tmpdir(), `bunlet-${kind}-${process.pid}-`)));
  return {
    v1(controllers: string[]): string {
      make("v1");
      for (const c of controllers) mkdirSync(join(root, c));
      return root;
    },
    v2(controllers = "cpuset cpu io memory pids"): string {
      make("v2");
      writeFileSync(join(root, "cgroup.controllers"), `${controllers}\n`);
      return root;
    },
    read: (...p: string[]) => readFileSync(join(root, ...p), "utf8"),
  };
}

/** The slices a manager starts for its first pod, a burstable one with UID "ab-cd", as "<unit><<parent>": kubepods, the QoS levels, the pod's. */
export const BURSTABLE_POD_SLICES = [
  "kubepods.slice<-.slice",
  "kubepods-burstable.slice<kubepods.slice",
  "kubepods-besteffort.slice<kubepods.slice",
  "kubepods-burstable-podab_cd.slice<kubepods-burstable.slice",
];

export interface FakeSystemd extends SystemdUnits {
  started: TransientUnit[];
  /** The started units as "<unit><<parent>". */
  startedSlices(): string[];
  stopped: string[];
  /** Each SetUnitProperties as "<unit> <name>=<value> …". */
  set: string[];
  closed: boolean;
}

/**
 * Stands in for systemd: a started slice's cgroup directory appears below `sliceRoot` (the v2 mount, or
 * on v1 the hierarchy systemd accounts), under its parents', as systemd makes it; with
 * `refuseProperties` every SetUnitProperties fails as an access denied.
 */
export function fakeSystemd(sliceRoot: string, opts: { refuseProperties?: boolean } = {}): FakeSystemd {
  const fake: FakeSystemd = {
    started: [],
    startedSlices: () => fake.started.map((u) => `${u.name}<${u.parent}`),
    stopped: [],
    set: [],
    closed: false,
    version: async () => 252,
    async setUnitProperties(name, props) {
      if (opts.refuseProperties) throw new Error("org.freedesktop.DBus.Error.AccessDenied");
      fake.set.push(`${name} ${props.map((p) => `${p.name}=${String(p.value)}`).join(" ")}`);
    },
    async startTransientUnit(u) {
      fake.started.push(u);
      mkdirSync(join(sliceRoot, cgroupDirPath("systemd", "/", u.name.replace(/\.slice$/, "").split("-"))), { recursive: true });
    },
    async stopUnit(name) {
      fake.stopped.push(name);
    },
    close() {
      fake.closed = true;
    },
  };
  return fake;
}
