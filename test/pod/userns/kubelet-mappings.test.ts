// The kubelet's id range: getsubids' answer for user "kubelet", or the default range.
import { describe, expect, test } from "bun:test";
import { getKubeletMappings, parseGetSubIdsOutput, passwdHasUser, type MappingsHost } from "../../../src/pod/userns/kubelet-mappings.ts";

const host = (o: Partial<MappingsHost>): MappingsHost => ({
  userExists: () => true,
  lookPath: () => "/usr/bin/getsubids",
  output: async () => "0: kubelet 65536 65536\n",
  ...o,
});

describe("kubelet mappings", () => {
  test.each([
    ["0: kubelet 65536 2147483648\n", { firstId: 65536, length: 2147483648 }],
    ["\n0: kubelet   196608 655360", { firstId: 196608, length: 655360 }],
  ])("getsubids output %j", (out, want) => {
    expect(parseGetSubIdsOutput(out)).toEqual(want);
  });

  test.each([
    ["0: kubelet 65536 65536\n1: kubelet 131072 65536\n", "it must contain only one line"],
    ["0: kubelet 65536", "invalid line"],
    ["0: kubelet x 65536", 'error parsing line "0: kubelet x 65536"'],
    ["0: kubelet 65536 4294967296", "error parsing line"],
  ])("getsubids output %j is refused", (out, msg) => {
    expect(() => parseGetSubIdsOutput(out)).toThrow(msg);
  });

  test("no user kubelet, or no getsubids: the default range", async () => {
    expect(await getKubeletMappings(65536, host({ userExists: () => false }))).toEqual({ firstId: 65536, length: 4294901760, source: "default" });
    expect((await getKubeletMappings(131072, host({ lookPath: () => undefined }))).firstId).toBe(131072);
  });

  test("user kubelet with getsubids: its range, asked for uids and gids", async () => {
    const calls: string[][] = [];
    const h = host({ output: async (_c, args) => (calls.push(args), "0: kubelet 2147483648 2147483648\n") });
    expect(await getKubeletMappings(65536, h)).toEqual({ firstId: 2147483648, length: 2147483648, source: "getsubids" });
    expect(calls).toEqual([["kubelet"], ["-g", "kubelet"]]);
  });

  test("uids and gids differ, or getsubids fails: upstream's errors", async () => {
    const differ = host({ output: async (_c, args) => (args[0] === "-g" ? "0: kubelet 1 2\n" : "0: kubelet 65536 65536\n") });
    await expect(getKubeletMappings(65536, differ)).rejects.toThrow('mismatched subuids and subgids for user "kubelet"');
    const fails = host({ output: async () => Promise.reject(new Error("exit status 1")) });
    await expect(getKubeletMappings(65536, fails)).rejects.toThrow('error retrieving additional uids for user "kubelet": exit status 1');
  });

  test("the user is looked up by name in /etc/passwd", () => {
    const passwd = "root:x:0:0:root:/root:/bin/bash\nkubeletx:x:5:5::/:/bin/false\n";
    expect(passwdHasUser(passwd, "kubelet")).toBe(false);
    expect(passwdHasUser(`${passwd}kubelet:x:999:999::/var/lib/kubelet:/usr/sbin/nologin\n`, "kubelet")).toBe(true);
  });
});
