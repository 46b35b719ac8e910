// The CLI's pure parts (no binary needed): --output splitting for `config print`, flag help lines.
import { describe, expect, test } from "bun:test";
import { renderFlags } from "../../src/cli/main.ts";
import { splitOutputFlag } from "../../src/cli/config-print.ts";
import type { FlagSpec } from "../../src/config/flag-spec.ts";

describe("splitOutputFlag", () => {
  test.each([
    [[], "yaml", []],
    [["--output", "json"], "json", []],
    [["--output=json", "--port=1"], "json", ["--port=1"]],
    [["-o", "yaml", "--config", "x.yaml"], "yaml", ["--config", "x.yaml"]],
    [["--eviction-hard=memory.available<1Gi", "-o=json"], "json", ["--eviction-hard=memory.available<1Gi"]],
  ] as const)("%j → output %s, kubelet flags %j", (argv, output, rest) => {
    expect(splitOutputFlag(argv)).toEqual({ output, rest: [...rest] });
  });

  test.each([[["--output=xml"]], [["-o"]]])("%j is rejected", (argv) => {
    expect(() => splitOutputFlag(argv)).toThrow();
  });
});

describe("renderFlags", () => {
  const DEP = "set it in the config file";
  const flags: FlagSpec[] = [
    { name: "v", shorthand: "v", type: "Level", kind: "level", description: "log level", default: "0", actedOn: true },
    { name: "port", type: "int32", kind: "int32", description: "The port", default: "10250", configField: "port", deprecated: DEP, actedOn: true },
    { name: "cloud-provider", type: "string", kind: "string", description: "Cloud", actedOn: false },
  ];

  test("one aligned line per flag with default, deprecation and acted-on marker", () => {
    const lines = renderFlags(flags, DEP).split("\n");
    expect(lines[0]).toMatch(/^ {2}-v, --v Level\s+log level \(default 0\)$/);
    expect(lines[1]).toMatch(/^ {6}--port int32\s+The port \(default 10250\) \(DEPRECATED: set it in the --config file\)$/);
    expect(lines[2]).toContain("Cloud [accepted; bunlet does not act on it]");
    const col = (l: string, text: string) => l.indexOf(text);
    expect(col(lines[0]!, "log level")).toBe(col(lines[1]!, "The port"));
  });
});
