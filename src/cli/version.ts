// `bunlet version`: the agent's version and the Bun runtime it was built with.
import { defineCommand } from "citty";
import pkg from "../../package.json" with { type: "json" };

export const VERSION: string = pkg.version;

export interface VersionInfo {
  bunletVersion: string;
  bunVersion: string;
  platform: string;
}

export function versionInfo(): VersionInfo {
  return { bunletVersion: `v${VERSION}`, bunVersion: Bun.version, platform: `${process.platform}/${process.arch}` };
}

export function renderVersion(info: VersionInfo, output: "text" | "json"): string {
  if (output === "json") return JSON.stringify(info, null, 2);
  return `bunlet ${info.bunletVersion}\nbun v${info.bunVersion} ${info.platform}`;
}

export default defineCommand({
  meta: { name: "version", description: "Print the bunlet and Bun versions" },
  args: {
    output: { type: "enum", alias: "o", options: ["text", "json"], default: "text", description: "Output format" },
  },
  run({ args }) {
    console.log(renderVersion(versionInfo(), args.output === "json" ? "json" : "text"));
  },
});
