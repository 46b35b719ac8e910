import { describe, expect, test } from "bun:test";
import { reservedSystemCPUsProblems, withReservedSystemCPUs } from "../../src/config/reserved-cpus.ts";

describe("reservedSystemCPUs", () => {
  test("overrides the reserved cpu: systemReserved.cpu is its count, kubeReserved.cpu goes", () => {
    const kc: { reservedSystemCPUs: string; systemReserved: Record<string, string>; kubeReserved: Record<string, string> } = {
      reservedSystemCPUs: "0,2-3",
      systemReserved: { memory: "1Gi", cpu: "100m" },
      kubeReserved: { cpu: "500m", pid: "100" },
    };
    expect(withReservedSystemCPUs(kc)).toEqual({ reservedSystemCPUs: "0,2-3", systemReserved: { memory: "1Gi", cpu: "3" }, kubeReserved: { pid: "100" } });
  });
  test("unset: unchanged", () => {
    const kc = { reservedSystemCPUs: "", systemReserved: { cpu: "100m" }, kubeReserved: {} };
    expect(withReservedSystemCPUs(kc)).toBe(kc);
  });
  test.each([
    [{ reservedSystemCPUs: "0-1" }, []],
    [{ reservedSystemCPUs: "2-1" }, ['invalid configuration: unable to parse reservedSystemCPUs (--reserved-cpus) 2-1, error: invalid range "2-1" (2 > 1)']],
    [
      { reservedSystemCPUs: "0", systemReservedCgroup: "/system.slice" },
      [
        "invalid configuration: can't use reservedSystemCPUs (--reserved-cpus) with systemReservedCgroup (--system-reserved-cgroup) or kubeReservedCgroup (--kube-reserved-cgroup)",
      ],
    ],
  ])("validation of %j", (kc, want) => expect(reservedSystemCPUsProblems(kc)).toEqual(want));
});
