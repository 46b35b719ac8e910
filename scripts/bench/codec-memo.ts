// CPU of decoding an idle node's relist replies through the CRI codec's entry memo: 100
// containers and 100 sandboxes shaped as containerd 1.6 lists them (labels and annotations as
// bunlet creates them), their map entries shuffled per reply as Go's maps come out, decoded again
// and again after the first (all memo hits, as on an idle node).
//   bun scripts/bench/codec-memo.ts [entries] [--rounds=N]
import { createCodec } from "../../src/cri/codec.ts";
import { CONTAINER_NAME_LABEL, newContainerAnnotations, newPodLabels } from "../../src/pod/kuberuntime/labels.ts";

const n = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 100);
const rounds = Number(process.argv.find((a) => a.startsWith("--rounds="))?.slice(9) ?? 2000);
const hex = (i: number, len: number) => (i.toString(16).padStart(8, "0") + "f".repeat(len)).slice(0, len);
const shuffled = (o: Record<string, string>) => Object.fromEntries(Object.entries(o).sort(() => Math.random() - 0.5));
const podLabels = (i: number) => ({
  ...newPodLabels({ name: `idle${i}-bench-node`, namespace: "default", uid: hex(i, 32) }),
  "bunlet.io/owner": "bench-node/1f2e3d4c",
});
const container = (i: number) => ({
  id: hex(i, 64),
  podSandboxId: hex(i + 1_000_000, 64),
  metadata: { name: "sleeper", attempt: 0 },
  image: { image: "bunlet.local/busybox:1" },
  imageRef: `sha256:${hex(7, 64)}`,
  state: "CONTAINER_RUNNING",
  createdAt: 1_764_000_000_000_000_000 + i,
  labels: shuffled({ ...podLabels(i), [CONTAINER_NAME_LABEL]: "sleeper" }),
  annotations: shuffled(newContainerAnnotations({ hash: "8f3c1a2b", restartCount: 0, terminationGracePeriodSeconds: 30 })),
});
const sandbox = (i: number) => ({
  id: hex(i + 1_000_000, 64),
  metadata: { name: `idle${i}-bench-node`, uid: hex(i, 32), namespace: "default", attempt: 0 },
  state: "SANDBOX_READY",
  createdAt: 1_764_000_000_000_000_000 + i,
  labels: shuffled({ ...podLabels(i), [CONTAINER_NAME_LABEL]: "POD" }),
  annotations: shuffled({
    "kubernetes.io/config.seen": "2026-12-02T07:00:00Z",
    "kubernetes.io/config.source": "file",
    "kubernetes.io/config.hash": hex(i, 32),
  }),
  runtimeHandler: "",
});
const codec = createCodec();
const replies = Array.from({ length: 20 }, () => ({
  containers: codec.encode("ListContainersResponse", { containers: Array.from({ length: n }, (_, i) => container(i)) }),
  sandboxes: codec.encode("ListPodSandboxResponse", { items: Array.from({ length: n }, (_, i) => sandbox(i)) }),
}));
const once = (r: (typeof replies)[number]) => {
  codec.decode("ListContainersResponse", r.containers);
  codec.decode("ListPodSandboxResponse", r.sandboxes);
};
for (let i = 0; i < 200; i++) once(replies[i % replies.length]!); // warm: memo filled, code compiled
const t0 = performance.now();
for (let i = 0; i < rounds; i++) once(replies[i % replies.length]!);
const ms = (performance.now() - t0) / rounds;
const bytes = replies[0]!.containers.length + replies[0]!.sandboxes.length;
console.log(
  `relist decode, ${n} containers + ${n} sandboxes (${(bytes / 1024).toFixed(1)} KiB a relist, all memo hits): ${(ms * 1000).toFixed(0)} µs a relist = ${(ms / 10).toFixed(3)} % of a core at one relist a second`,
);
