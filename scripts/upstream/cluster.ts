// `bun scripts/upstream/cluster.ts up|down|status`: a real one-node control plane on loopback from the
// upstream binaries (scripts/upstream/build.sh), for people and scripts (see test/support/upstream/
// control-plane.ts). `up` prints `export KUBECONFIG=…` and `export BOOTSTRAP_KUBECONFIG=…`, so
// `eval "$(bash scripts/upstream/cluster.sh up)"` leaves a shell ready for kubectl and for a bunlet
// started with `--bootstrap-kubeconfig="$BOOTSTRAP_KUBECONFIG"`. State: $BUNLET_CLUSTER_DIR
// (default /tmp/bunlet-upstream-cluster); the components' logs stay in its logs/ after `down`.
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { startControlPlane, stopControlPlaneDir } from "../../test/support/upstream/control-plane.ts";
import { buildUpstream } from "../../test/support/upstream/index.ts";

const dir = process.env.BUNLET_CLUSTER_DIR ?? "/tmp/bunlet-upstream-cluster";
const say = (s: string) => console.error(`cluster: ${s}`);

function exports(): string {
  return `export KUBECONFIG=${join(dir, "admin.kubeconfig")}\nexport BOOTSTRAP_KUBECONFIG=${join(dir, "bootstrap-kubelet.kubeconfig")}`;
}

async function up(): Promise<void> {
  if (existsSync(join(dir, "pids"))) {
    say(`already up (state in ${dir}); \`down\` first to start afresh`);
    console.log(exports());
    return;
  }
  rmSync(dir, { recursive: true, force: true });
  const cp = await startControlPlane({
    dir,
    binDir: await buildUpstream("kube-apiserver kube-controller-manager kube-scheduler kubectl"),
    keepDir: true,
    port: Number(process.env.BUNLET_CLUSTER_PORT ?? 6443),
  });
  say(`up: ${cp.server}; logs in ${join(dir, "logs")}; stop with \`bash scripts/upstream/cluster.sh down\``);
  console.log(exports());
}

async function down(): Promise<void> {
  await stopControlPlaneDir(dir);
  say(`down (logs kept in ${join(dir, "logs")})`);
}

const cmd = process.argv[2];
if (cmd === "up") await up();
else if (cmd === "down") await down();
else if (cmd === "status") console.log(existsSync(join(dir, "pids")) ? readFileSync(join(dir, "pids"), "utf8").trim() : "down");
else {
  console.error("usage: scripts/upstream/cluster.sh up|down|status");
  process.exit(2);
}
