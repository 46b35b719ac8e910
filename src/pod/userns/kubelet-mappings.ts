// The host ids the kubelet may hand to pods (upstream kubelet_pods.go getKubeletMappings and
// parseGetSubIdsOutput): when a user "kubelet" exists and `getsubids` is installed, its one
// subordinate range (the same for uids and gids: /etc/subuid, /etc/subgid or an NSS source);
// otherwise every id from idsPerPod up to 2^32 (ids below it, root's among them, are never mapped).
import { execFile } from "node:child_process";
import { accessSync, constants, readFileSync } from "node:fs";
import { join } from "node:path";

/** The user whose subordinate ids the kubelet uses (upstream kubeletUser). */
export const KUBELET_USER = "kubelet";

export interface KubeletMappings {
  firstId: number;
  length: number;
  /** Where they came from, for the log line. */
  source: "default" | "getsubids";
}

/** Upstream's default: idsPerPod up to the last 32-bit id. */
export function defaultMappings(idsPerPod: number): KubeletMappings {
  return { firstId: idsPerPod, length: 2 ** 32 - idsPerPod, source: "default" };
}

/** `getsubids kubelet` output ("0: kubelet 65536 65536"): the range's start and length; throws upstream's errors. */
export function parseGetSubIdsOutput(input: string): { firstId: number; length: number } {
  const lines = input.replace(/^\n+|\n+$/g, "").split("\n");
  if (lines.length !== 1) throw new Error(`error parsing line ${JSON.stringify(input)}: it must contain only one line`);
  const parts = lines[0]!.trim().split(/\s+/);
  if (parts.length !== 4) throw new Error(`invalid line ${JSON.stringify(input)}`);
  const num = (s: string) => {
    if (!/^\d+$/.test(s) || Number(s) > 0xffff_ffff)
      throw new Error(`error parsing line ${JSON.stringify(input)}: strconv.ParseUint: parsing ${JSON.stringify(s)}: invalid syntax`);
    return Number(s);
  };
  return { firstId: num(parts[2]!), length: num(parts[3]!) };
}

export interface MappingsHost {
  /** Whether the user exists (upstream user.Lookup). */
  userExists(name: string): boolean;
  /** The executable's path on PATH, undefined when absent (upstream exec.LookPath). */
  lookPath(name: string): string | undefined;
  /** Runs a command; resolves its stdout, rejects on a failure. */
  output(cmd: string, args: string[]): Promise<string>;
}

/** Upstream getKubeletMappings over the host's user database and getsubids. */
export async function getKubeletMappings(idsPerPod: number, host: MappingsHost = realHost): Promise<KubeletMappings> {
  // getsubids may ask a remote source: an existing user with no answer means that source is down.
  if (!host.userExists(KUBELET_USER)) return defaultMappings(idsPerPod);
  const cmd = host.lookPath("getsubids");
  if (!cmd) return defaultMappings(idsPerPod);
  let uids: string;
  let gids: string;
  try {
    uids = await host.output(cmd, [KUBELET_USER]);
  } catch (e) {
    throw new Error(`error retrieving additional uids for user "${KUBELET_USER}": ${(e as Error).message}`);
  }
  try {
    gids = await host.output(cmd, ["-g", KUBELET_USER]);
  } catch {
    throw new Error(`error retrieving additional gids for user "${KUBELET_USER}"`);
  }
  if (uids !== gids) throw new Error(`mismatched subuids and subgids for user "${KUBELET_USER}"`);
  return { ...parseGetSubIdsOutput(uids), source: "getsubids" };
}

/** /etc/passwd has a line for `name` (Go's os/user without cgo reads that file). */
export function passwdHasUser(passwd: string, name: string): boolean {
  return passwd.split("\n").some((l) => l.split(":")[0] === name);
}

const realHost: MappingsHost = {
  userExists(name) {
    try {
      return passwdHasUser(readFileSync("/etc/passwd", "utf8"), name);
    } catch {
      return false;
    }
  },
  lookPath(name) {
    for (const dir of (process.env.PATH ?? "").split(":")) {
      if (!dir) continue;
      try {
        accessSync(join(dir, name), constants.X_OK);
        return join(dir, name);
      } catch {}
    }
    return undefined;
  },
  output: (cmd, args) => new Promise((resolve, reject) => execFile(cmd, args, { timeout: 30_000 }, (err, stdout) => (err ? reject(err) : resolve(stdout)))),
};
