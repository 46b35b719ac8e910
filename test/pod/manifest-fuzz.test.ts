// ≥ 1,000 generated hostile manifests (YAML bombs, huge fields, bad types, deep
// nesting, special files, symlinks, non-UTF-8) through the real file source of a running pod
// lifecycle: each is a clear error (or a skip warning) naming its file, nothing crashes, RSS and
// open fds stay bounded, and the one good pod beside them is started once and never touched.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPodLifecycle } from "../../src/pod/lifecycle.ts";
import { MAX_MANIFEST_BYTES } from "../../src/pod/sources/read-manifest.ts";
import { aliasBomb, podYaml } from "../support/hostile.ts";
import { openFds, seededRand, type Rand } from "../support/rand.ts";
import { createSettlingClock } from "../support/settling-clock.ts";
import { createFakeRuntime } from "./fake-runtime.ts";
import { waitFor } from "../support/cgroup.ts";

const dir = mkdtempSync(join(tmpdir(), `bunlet-fuzz-${process.pid}-`));
afterAll(() => process.env.KEEP_FUZZ || rmSync(dir, { recursive: true, force: true }));

const good = () => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "p", labels: { app: "x" } },
  spec: { containers: [{ name: "app", image: "i", resources: { limits: { memory: "64Mi" } } }] },
});
const wrongValues = [42, -1, 1e400, "str", true, null, [], {}, [1, 2], { a: 1 }, "\u0000", "x".repeat(300)];

/** Sets a random field of a good pod to a value of the wrong type or shape. */
function badType(r: Rand): string {
  const p = good() as Record<string, any>;
  const paths: [any, string][] = [
    [p, "kind"],
    [p, "spec"],
    [p, "metadata"],
    [p.metadata, "name"],
    [p.metadata, "labels"],
    [p.spec, "containers"],
    [p.spec.containers[0], "name"],
    [p.spec.containers[0], "image"],
    [p.spec.containers[0], "resources"],
    [p.spec.containers[0].resources.limits, "memory"],
  ];
  const [obj, key] = r.pick(paths);
  let v: unknown = r.pick(wrongValues);
  // Only values that can never be valid where they land (a string image or a numeric memory would be).
  if (typeof v === "string" && key !== "name") v = r.pick([null, [], true, { a: 1 }]);
  if (typeof v === "number" && (key === "memory" || key === "image")) v = r.pick([null, [1], false]);
  if (key === "name" && v === "str") v = "Not A DNS Name";
  if (key === "labels" && v !== null && typeof v === "object" && !Array.isArray(v)) v = { "bad key!": 1 };
  if (key === "metadata" || key === "spec" || key === "resources") v = r.pick([42, "str", [1], true]);
  obj[key] = v;
  return JSON.stringify(p);
}

const generators: ((r: Rand, file: string) => void)[] = [
  (r, f) => writeFileSync(f, aliasBomb.replace(/x/g, "y".repeat(1 + r.int(5)))),
  (r, f) => writeFileSync(f, badType(r)),
  (r, f) => writeFileSync(f, `${podYaml("p")}  ${r.pick(["hostPID", "shareProcessNamespace", "overhead", "x"])}${r.int(9)}: true\n`),
  (r, f) => writeFileSync(f, `a: ${"[".repeat(101 + r.int(5000))}`),
  (r, f) => writeFileSync(f, Buffer.concat([Buffer.from(podYaml("p")), Buffer.from([0xc3, 0x28, 0xff, r.int(256) | 0x80])])),
  (r, f) => writeFileSync(f, `${podYaml("p")}    resources: {limits: {memory: "-${1 + r.int(100)}Gi"}}\n`),
  (r, f) => writeFileSync(f, podYaml("n".repeat(250 + r.int(3000)))),
  (r, f) => writeFileSync(f, podYaml(`Bad_${r.int(1000)}`)),
  (r, f) => writeFileSync(f, `${podYaml("p").replace("metadata:\n", `metadata:\n  labels: {"${r.pick(["a/b/c", "-x", "x".repeat(64), "/x"])}": v}\n`)}`),
  (r, f) => writeFileSync(f, `kind: ${r.pick(["Deployment", "Secret", "42", "[]"])}\nmetadata: {name: x}\n`),
  (r, f) => writeFileSync(f, `{"kind": "Pod", "metadata": {"name": "x"` + "}".repeat(r.int(3))),
  (r, f) => writeFileSync(f, `- ${r.pick(["1", "x", "[]", "{a: 1}"])}\n- :\n`),
  (_r, f) => symlinkSync(r0.pick(["/dev/zero", "/dev/null", "/dev/urandom"]), f),
  (_r, f) => fifos.push(f),
  (_r, f) => mkdirSync(f),
];
const r0 = seededRand(7);
const fifos: string[] = [];
/** A few oversized files (each costs disk and time): every 50th case. */
const oversized = (r: Rand, f: string) => writeFileSync(f, `${podYaml("p")}  annotations: {a: "${"z".repeat(MAX_MANIFEST_BYTES + r.int(1024))}"}\n`);

describe("manifest fuzz", () => {
  test("1,000+ hostile manifests: a clear error each, bounded RSS/fds, the good pod untouched", async () => {
    const clock = createSettlingClock();
    const rt = createFakeRuntime(clock.now);
    writeFileSync(join(dir, "0-good.yaml"), podYaml("good"));
    const lc = createPodLifecycle({
      runtime: rt,
      clock,
      config: { nodeName: "n", hostIP: "10.0.0.1", staticPodPath: dir, fileCheckFrequencyMs: 20_000, syncFrequencyMs: 3_600_000 },
    });
    try {
      await lc.start();
      await clock.advance(0);
      await lc.whenIdle();
      expect(rt.calls).toContain("start good-n/app#0");
      const fdsBefore = await openFds();
      const rssBefore = process.memoryUsage().rss;

      const r = seededRand(20261201);
      const N = 1_050;
      for (let i = 0; i < N; i++) {
        const file = join(dir, `h${String(i).padStart(4, "0")}.yaml`);
        (i % 50 === 49 ? oversized : generators[i % generators.length]!)(r, file);
      }
      expect(Bun.spawnSync(["mkfifo", ...fifos]).exitCode).toBe(0); // one process for all FIFOs
      await clock.advance(20_000); // the periodic re-read picks them all up
      const last = join(dir, `h${String(N - 1).padStart(4, "0")}.yaml`);
      await waitFor(() => lc.manifestErrors().some((e) => e.file === last), "the re-read of the hostile files", 30_000);
      await lc.whenIdle();

      // Every hostile file is accounted for: an error naming it, or (special files) skipped.
      const named = new Set(lc.manifestErrors().map((e) => e.file));
      const silent = [];
      for (let i = 0; i < N; i++) {
        const file = join(dir, `h${String(i).padStart(4, "0")}.yaml`);
        const special = i % 50 !== 49 && i % generators.length >= generators.length - 3;
        if (!special && !named.has(file)) silent.push(file);
        if (special && named.has(file)) silent.push(`${file} (special file reported as a manifest error)`);
      }
      expect(silent).toEqual([]);
      for (const e of lc.manifestErrors()) expect(e.message).toMatch(/^invalid pod manifest \/.+\.yaml/);
      // The good pod: started once, never killed; the lifecycle still works.
      expect(rt.calls.filter((c) => c.startsWith("start good-n"))).toEqual(["start good-n/app#0"]);
      expect(rt.calls.filter((c) => c.startsWith("kill"))).toEqual([]);
      expect(lc.listPodsForApi().map((p) => `${p.metadata.name} ${p.status?.phase}`)).toEqual(["good-n Running"]);

      expect((await openFds()) - fdsBefore).toBeLessThan(20);
      const rssGrowth = process.memoryUsage().rss - rssBefore;
      console.log(`manifest fuzz: ${N} hostile files, ${lc.manifestErrors().length} errors, RSS +${(rssGrowth / 1e6).toFixed(1)} MB`);
      expect(rssGrowth).toBeLessThan(300 * 1024 * 1024);
    } finally {
      await lc.stop();
    }
  });
});
