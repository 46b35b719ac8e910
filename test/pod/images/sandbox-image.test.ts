import { expect, test } from "bun:test";
import { sandboxImages } from "../../../src/pod/images/sandbox-image.ts";

test.each([
  ["containerd's CRI config", { config: JSON.stringify({ sandboxImage: "bunlet.local/pause:1" }) }, ["bunlet.local/pause:1"]],
  ["no config", {}, []],
  ["not JSON", { config: "{" }, []],
] as const)("sandboxImages: %s", async (_name, info, want) => {
  expect(await sandboxImages({ status: async () => ({ status: null, info: { ...info } }) })).toEqual([...want]);
});
