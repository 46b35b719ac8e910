// Benchmark: the lean CRI client (src/cri/: its own HTTP/2 transport + protobufjs) vs @grpc/grpc-js + @grpc/proto-loader,
// against a private containerd started for the run. Prints cold start (fresh process: import, parse the
// proto, first Version call), per-call latency (Version, ListContainers, ListImages) and the size added to
// a `bun build --compile` binary. grpc-js is installed into a scratch dir (never into the project).
//   bun scripts/bench/cri.ts [--calls 500]
import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");
const CALLS = Number(process.argv[process.argv.indexOf("--calls") + 1] || 500) || 500;
const SCRATCH = `/tmp/bunlet-bench-cri-${process.pid}`;
const GRPC_DIR = "/tmp/bunlet-bench-grpc-deps";
const env = {
  ...process.env,
  BUNLET_CONTAINERD_DIR: `/run/bunlet/bench-${process.pid}`,
  BUNLET_CONTAINERD_ROOT: `/var/lib/bunlet/bench-${process.pid}`,
  BUNLET_CNI_BRIDGE: `blb${process.pid}`.slice(0, 15),
};
const SOCK = `${env.BUNLET_CONTAINERD_DIR}/containerd.sock`;
const bun = process.execPath;

function sh(cmd: string[], opts: { cwd?: string } = {}): string {
  const r = spawnSync(cmd[0] as string, cmd.slice(1), { env, encoding: "utf8", cwd: opts.cwd, timeout: 600_000 });
  if (r.status !== 0) throw new Error(`${cmd.join(" ")} failed: ${r.stderr}${r.stdout}`);
  return r.stdout;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number;
};
const fmt = (ms: number) => `${ms.toFixed(ms < 10 ? 2 : 0)} ms`;

// Each client is exercised by the same probe program shape: report import+setup, first call, then N calls.
const leanProbe = `
const t0 = performance.now();
const { createCriClient } = await import(${JSON.stringify(`${ROOT}/src/cri/client.ts`)});
const cri = createCriClient({ endpoint: "unix://${SOCK}" });
const t1 = performance.now();
await cri.version();
const t2 = performance.now();
const lat = { Version: [], ListContainers: [], ListImages: [] };
for (let i = 0; i < Number(process.env.CALLS); i++) {
  let a = performance.now(); await cri.version(); lat.Version.push(performance.now() - a);
  a = performance.now(); await cri.listContainers(); lat.ListContainers.push(performance.now() - a);
  a = performance.now(); await cri.listImages(); lat.ListImages.push(performance.now() - a);
}
console.log(JSON.stringify({ setup: t1 - t0, first: t2 - t1, lat }));
cri.close();
`;

const grpcProbe = `
const t0 = performance.now();
const grpc = await import(${JSON.stringify(`${GRPC_DIR}/node_modules/@grpc/grpc-js/build/src/index.js`)});
const loader = await import(${JSON.stringify(`${GRPC_DIR}/node_modules/@grpc/proto-loader/build/src/index.js`)});
const def = loader.loadSync(${JSON.stringify(`${ROOT}/src/cri/api.proto`)}, { longs: Number, enums: String, defaults: true });
const pkg = grpc.loadPackageDefinition(def).runtime.v1;
const rt = new pkg.RuntimeService("unix://${SOCK}", grpc.credentials.createInsecure());
const im = new pkg.ImageService("unix://${SOCK}", grpc.credentials.createInsecure());
const call = (c, m, req) => new Promise((res, rej) => c[m](req, { deadline: Date.now() + 10000 }, (e, r) => (e ? rej(e) : res(r))));
const t1 = performance.now();
await call(rt, "Version", { version: "v1" });
const t2 = performance.now();
const lat = { Version: [], ListContainers: [], ListImages: [] };
for (let i = 0; i < Number(process.env.CALLS); i++) {
  let a = performance.now(); await call(rt, "Version", { version: "v1" }); lat.Version.push(performance.now() - a);
  a = performance.now(); await call(rt, "ListContainers", {}); lat.ListContainers.push(performance.now() - a);
  a = performance.now(); await call(im, "ListImages", {}); lat.ListImages.push(performance.now() - a);
}
console.log(JSON.stringify({ setup: t1 - t0, first: t2 - t1, lat }));
rt.close(); im.close();
`;

interface ProbeResult {
  wallMs: number;
  setup: number;
  first: number;
  lat: Record<string, number[]>;
}

function runProbe(file: string, calls: number): ProbeResult {
  const t = performance.now();
  const r = spawnSync(bun, [file], { env: { ...env, CALLS: String(calls) }, encoding: "utf8" });
  const wallMs = performance.now() - t;
  if (r.status !== 0) throw new Error(`${file}: ${r.stderr}`);
  return { wallMs, ...JSON.parse(r.stdout.trim().split("\n").pop() as string) };
}

function compiledSize(name: string, source: string): { bytes: number; ok: boolean } {
  const entry = `${SCRATCH}/${name}.ts`;
  const out = `${SCRATCH}/${name}.bin`;
  writeFileSync(entry, source);
  sh([bun, "build", "--compile", entry, "--outfile", out], { cwd: ROOT });
  // Run the binary: proves the embedded .proto (and the client) work from $bunfs.
  const r = spawnSync(out, [], { env, encoding: "utf8", timeout: 30_000 });
  return { bytes: statSync(out).size, ok: r.status === 0 && r.stdout.includes("containerd") };
}

async function main() {
  mkdirSync(SCRATCH, { recursive: true });
  try {
    sh(["bash", `${ROOT}/scripts/host/setup.sh`]);
    sh(["bash", `${ROOT}/scripts/host/containerd.sh`, "start"]);
    let haveGrpc = true;
    try {
      statSync(`${GRPC_DIR}/node_modules/@grpc/grpc-js`);
    } catch {
      mkdirSync(GRPC_DIR, { recursive: true });
      writeFileSync(`${GRPC_DIR}/package.json`, '{"private":true}');
      const r = spawnSync("npm", ["install", "--no-audit", "--no-fund", "@grpc/grpc-js@1", "@grpc/proto-loader@0.7"], { cwd: GRPC_DIR, encoding: "utf8" });
      haveGrpc = r.status === 0;
      if (!haveGrpc) console.log(`(grpc-js not installable here: ${r.stderr.slice(0, 200)}) — lean client only`);
    }
    writeFileSync(`${SCRATCH}/lean.mjs`, leanProbe);
    writeFileSync(`${SCRATCH}/grpc.mjs`, grpcProbe);

    const rows: [string, ProbeResult[]][] = [["lean (node:http2 + protobufjs)", []]];
    if (haveGrpc) rows.push(["@grpc/grpc-js + proto-loader", []]);
    // Cold start: 5 fresh processes each (0 calls); latency: one process with CALLS calls.
    for (let i = 0; i < 5; i++) {
      rows[0]?.[1].push(runProbe(`${SCRATCH}/lean.mjs`, 0));
      if (haveGrpc) rows[1]?.[1].push(runProbe(`${SCRATCH}/grpc.mjs`, 0));
    }
    console.log(`\ncold start (fresh bun process, median of 5)`);
    console.log("client".padEnd(34), "import+setup".padStart(14), "first call".padStart(12), "process wall".padStart(14));
    for (const [name, rs] of rows) {
      console.log(
        name.padEnd(34),
        fmt(
          pct(
            rs.map((r) => r.setup),
            50,
          ),
        ).padStart(14),
        fmt(
          pct(
            rs.map((r) => r.first),
            50,
          ),
        ).padStart(12),
        fmt(
          pct(
            rs.map((r) => r.wallMs),
            50,
          ),
        ).padStart(14),
      );
    }
    console.log(`\nper-call latency over ${CALLS} calls each (p50 / p99)`);
    const lat = rows.map(([name]) => [name, runProbe(`${SCRATCH}/${name.startsWith("lean") ? "lean" : "grpc"}.mjs`, CALLS)] as const);
    for (const [name, r] of lat) {
      const cells = Object.entries(r.lat).map(([m, xs]) => `${m} ${fmt(pct(xs, 50))} / ${fmt(pct(xs, 99))}`);
      console.log(name.padEnd(34), cells.join("   "));
    }
    if (lat.length === 2) {
      const v = (i: number) => pct((lat[i]?.[1].lat.Version ?? []) as number[], 50);
      console.log(`Version p50 ratio lean/grpc-js: ${(v(0) / v(1)).toFixed(2)}`);
    }

    console.log(`\ncompiled binary size (bun build --compile; each binary runs one Version call)`);
    const base = compiledSize("hello", `console.log("containerd");`);
    const lean = compiledSize(
      "lean",
      `import { createCriClient } from ${JSON.stringify(`${ROOT}/src/cri/client.ts`)};
       const c = createCriClient({ endpoint: "unix://${SOCK}" }); console.log((await c.version()).runtimeName); c.close();`,
    );
    const mb = (b: number) => `${(b / 1e6).toFixed(2)} MB`;
    console.log(`baseline hello        ${mb(base.bytes)}`);
    console.log(`lean client           ${mb(lean.bytes)}  (+${mb(lean.bytes - base.bytes)})  runs from the binary: ${lean.ok}`);
    if (haveGrpc) {
      const g = compiledSize(
        "grpc",
        `import * as grpc from ${JSON.stringify(`${GRPC_DIR}/node_modules/@grpc/grpc-js`)};
         import * as loader from ${JSON.stringify(`${GRPC_DIR}/node_modules/@grpc/proto-loader`)};
         import proto from ${JSON.stringify(`${ROOT}/src/cri/api.proto`)} with { type: "file" };
         const def = loader.loadSync(proto, { longs: Number, enums: String, defaults: true });
         const pkg: any = grpc.loadPackageDefinition(def).runtime;
         const rt = new pkg.v1.RuntimeService("unix://${SOCK}", grpc.credentials.createInsecure());
         rt.Version({ version: "v1" }, (e: unknown, r: any) => { console.log(e ?? r.runtime_name ?? r.runtimeName); rt.close(); });`,
      );
      console.log(`grpc-js + proto-loader ${mb(g.bytes)}  (+${mb(g.bytes - base.bytes)})  runs from the binary: ${g.ok}`);
    }
  } finally {
    spawnSync("bash", [`${ROOT}/scripts/host/containerd.sh`, "destroy"], { env, stdio: "ignore" });
    rmSync(SCRATCH, { recursive: true, force: true });
  }
}

await main();
