// The import rule (docs/development.md#imports-run-down): no module cycle, and a
// module imports only from its own layer's folder or from a layer below it. `npm run check` runs it
// through scripts/check/imports.ts; by hand: `./node_modules/.bin/bun node_modules/.bin/depcruise src ffi scripts test`.
// The layers bind src/ and ffi/; the cycle rule binds scripts/ and test/ too.
// Type-only imports count: a type that runs up is as much a tie as a value.

/**
 * The layers, bottom first. Each entry is one layer: the folders (or root files) in it. A module may
 * import anything in a lower layer, and within its own layer only from its own folder: folders that
 * share a layer are peers that do not know each other (the root files of one layer may use each other).
 */
export const LAYERS = [
  { name: "ffi", paths: ["ffi/"] },
  {
    name: "base",
    paths: [
      "src/agent-component.ts",
      "src/clock.ts",
      "src/manual-clock.ts",
      "src/log.ts",
      "src/json-redacted.ts",
      "src/lockfile.ts",
      "src/atomic-file.ts",
      "src/runtime-env.ts",
      "src/memory-report.ts",
    ],
  },
  { name: "config", paths: ["src/config/"] },
  { name: "clients and the kernel", paths: ["src/cri/", "src/kube/", "src/credentialprovider/", "src/kernel/"] },
  { name: "events and podresources", paths: ["src/events/", "src/podresources/"] },
  { name: "pod", paths: ["src/pod/"] },
  { name: "stats", paths: ["src/stats/"] },
  { name: "server", paths: ["src/server/"] },
  { name: "eviction and metrics", paths: ["src/eviction/", "src/metrics/"] },
  { name: "node", paths: ["src/node/"] },
  { name: "wire", paths: ["src/wire/"] },
  { name: "agent", paths: ["src/agent.ts", "src/agent-run.ts", "src/node-agent-context.ts"] },
  { name: "cli", paths: ["src/cli/"] },
  { name: "main", paths: ["src/main.ts"] },
];

const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** A folder matches everything under it; a root file matches itself only. */
const pattern = (paths) => `^(${paths.map((p) => escapeRegExp(p) + (p.endsWith("/") ? "" : "$")).join("|")})`;

/** One rule per folder: it may not import a peer of its layer or anything above it. */
function layerRules() {
  const rules = [];
  LAYERS.forEach((layer, i) => {
    const above = LAYERS.slice(i + 1).flatMap((l) => l.paths);
    for (const path of layer.paths) {
      // Root files of one layer may use each other; folders of one layer are peers.
      const peers = path.endsWith("/") ? layer.paths.filter((p) => p !== path) : layer.paths.filter((p) => p.endsWith("/"));
      const forbidden = [...above, ...peers];
      if (forbidden.length === 0) continue;
      rules.push({
        name: `layer:${path}`,
        comment: `${path} (layer "${layer.name}") imports only from itself and the layers below it`,
        severity: "error",
        from: { path: pattern([path]) },
        to: { path: pattern(forbidden) },
      });
    }
  });
  return rules;
}

/** @type {import("dependency-cruiser").IConfiguration} */
export default {
  forbidden: [
    {
      name: "no-circular",
      comment: "a module cycle: move the shared part into a module both import, or the function to the layer that owns it",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    ...layerRules(),
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    includeOnly: "^(src|ffi|scripts|test)/",
    tsPreCompilationDeps: true,
    // A run with no source changed reuses the last result (content hashes; .tmp/ is not in git).
    cache: { folder: ".tmp/dependency-cruiser", strategy: "content", compress: false },
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "types", "default"] },
  },
};
