import { describe, expect, test } from "bun:test";
import {
  cgroupFileNamesContainer,
  containerInitPid,
  firstStopSignal,
  imageStopSignal,
  parseSignal,
  signalName,
} from "../../../src/pod/kuberuntime/stop-signal.ts";

const info = (v: unknown) => ({ info: JSON.stringify(v) });

describe("stop signal helpers", () => {
  test.each<[string, number | undefined]>([
    ["SIGTERM", 15],
    ["TERM", 15],
    ["sigquit", 3],
    ["15", 15],
    [" SIGINT ", 2],
    ["SIGRTMIN+3", 37],
    ["RTMAX", 64],
    ["SIGNOPE", undefined],
    ["0", undefined],
    ["65", undefined],
    ["SIGRTMAX+1", undefined],
  ])("parseSignal(%p) = %p", (text, want) => {
    expect(parseSignal(text)).toBe(want);
  });

  test.each<[number, string]>([
    [15, "SIGTERM"],
    [9, "SIGKILL"],
    [40, "SIG40"],
  ])("signalName(%p) = %p", (n, want) => {
    expect(signalName(n)).toBe(want);
  });

  test.each<[number, number, number]>([
    [0, 15, 9],
    [1, 15, 15],
    [1, 3, 3],
  ])("grace %p with stop signal %p sends %p first (containerd: a 0 timeout skips straight to SIGKILL)", (grace, stop, want) => {
    expect(firstStopSignal(grace, stop)).toBe(want);
  });

  test.each<[string, Record<string, string> | undefined, number | undefined]>([
    ["containerd verbose info", info({ sandboxID: "s", pid: 4242, removing: false }), 4242],
    ["not running (pid 0)", info({ pid: 0 }), undefined],
    ["no info", undefined, undefined],
    ["not JSON", { info: "{" }, undefined],
  ])("containerInitPid: %s", (_name, i, want) => {
    expect(containerInitPid(i)).toBe(want);
  });

  test.each<[string, Record<string, string> | undefined, number | undefined]>([
    ["no StopSignal → SIGTERM", info({ chainID: "x", imageSpec: { config: { Entrypoint: ["/memhog"] } } }), 15],
    ["StopSignal SIGQUIT", info({ imageSpec: { config: { StopSignal: "SIGQUIT" } } }), 3],
    ["unparseable StopSignal → no direct signal", info({ imageSpec: { config: { StopSignal: "SIGBOGUS" } } }), undefined],
    ["no verbose info → no direct signal", {}, undefined],
  ])("imageStopSignal: %s", (_name, i, want) => {
    expect(imageStopSignal(i)).toBe(want);
  });

  const id = "0123456789abcdef";
  test.each<[string, string, boolean]>([
    ["cgroupfs v1", `12:memory:/kubepods/besteffort/poduid/${id}\n11:cpu,cpuacct:/kubepods/besteffort/poduid/${id}\n`, true],
    ["systemd driver", `0::/kubepods.slice/kubepods-pod.slice/cri-containerd-${id}.scope\n`, true],
    ["CRI-O, cgroupfs", `12:memory:/kubepods/besteffort/poduid/crio-${id}\n`, true],
    ["CRI-O, systemd driver", `0::/kubepods.slice/kubepods-pod.slice/crio-${id}.scope\n`, true],
    ["CRI-O's conmon in the pod's cgroup", "12:memory:/kubepods/besteffort/poduid\n", false],
    ["another container", "12:memory:/kubepods/besteffort/poduid/fedcba\n", false],
    ["id only as a prefix of the leaf", `12:memory:/kubepods/x/${id}0\n`, false],
  ])("cgroupFileNamesContainer: %s", (_name, text, want) => {
    expect(cgroupFileNamesContainer(text, id)).toBe(want);
  });
});
