// Termination messages (src/pod/kuberuntime/termination-message.ts): the pure choices of upstream's
// getTerminationMessage / convertToKubeContainerStatus, the log tail's line and byte limits, the
// file's 4 KiB tail, the host file and its mount, and the pod status's 12 KiB split.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateContainerConfig, type ConfigInputs } from "../../../src/pod/kuberuntime/config.ts";
import {
  CONTAINER_TERMINATION_MESSAGE_PATH_LABEL as PATH_LABEL,
  CONTAINER_TERMINATION_MESSAGE_POLICY_LABEL as POLICY_LABEL,
} from "../../../src/pod/kuberuntime/labels.ts";
import {
  DEFAULT_TERMINATION_MESSAGE_PATH,
  MAX_CONTAINER_TERMINATION_MESSAGE_LENGTH,
  MAX_CONTAINER_TERMINATION_MESSAGE_LOG_LENGTH,
  MAX_CONTAINER_TERMINATION_MESSAGE_LOG_LINES,
  containerTerminationMessage,
  createTerminationMessageFile,
  lastStringFromLogText,
  readAtMost,
  readLastStringFromContainerLogs,
  terminationMessageFromFile,
  withTerminationMessage,
} from "../../../src/pod/kuberuntime/termination-message.ts";
import type { KubeContainer, KubePod } from "../../../src/pod/kuberuntime/types.ts";
import { MAX_POD_TERMINATION_MESSAGE_LOG_LENGTH, truncateBytes, truncateTerminationMessages } from "../../../src/pod/status.ts";
import type { ContainerStatus, Pod, PodStatus } from "../../../src/pod/types.ts";

const TMP = mkdtempSync(join(tmpdir(), "bunlet-termmsg-"));
afterAll(() => rmSync(TMP, { recursive: true, force: true }));

const criLine = (content: string, stream = "stdout", tag = "F") => `2026-12-01T22:00:00.000000000Z ${stream} ${tag} ${content}`;

test("upstream's limits", () => {
  expect(MAX_POD_TERMINATION_MESSAGE_LOG_LENGTH).toBe(12 * 1024);
  expect(MAX_CONTAINER_TERMINATION_MESSAGE_LENGTH).toBe(4 * 1024);
  expect(MAX_CONTAINER_TERMINATION_MESSAGE_LOG_LENGTH).toBe(2 * 1024);
  expect(MAX_CONTAINER_TERMINATION_MESSAGE_LOG_LINES).toBe(80);
  expect(DEFAULT_TERMINATION_MESSAGE_PATH).toBe("/dev/termination-log");
});

describe("terminationMessageFromFile (upstream getTerminationMessage)", () => {
  const mounts = [
    { containerPath: "/data", hostPath: "/srv/data" },
    { containerPath: "/dev/termination-log", hostPath: "/host/tlog" },
  ];
  const enoent = (): string => {
    throw Object.assign(new Error("ENOENT: no such file or directory"), { code: "ENOENT" });
  };
  const eacces = (): string => {
    throw Object.assign(new Error("EACCES: permission denied"), { code: "EACCES" });
  };
  test.each([
    ["no path, File", "", false, () => "x", { message: "", checkLogs: false }],
    ["no path, fallback", "", true, () => "x", { message: "", checkLogs: true }],
    ["no such mount", "/other", true, () => "x", { message: "", checkLogs: true }],
    ["file gone", "/dev/termination-log", true, enoent, { message: "", checkLogs: true }],
    ["file gone, File", "/dev/termination-log", false, enoent, { message: "", checkLogs: false }],
    [
      "unreadable",
      "/dev/termination-log",
      true,
      eacces,
      { message: "Error on reading termination log /host/tlog: EACCES: permission denied", checkLogs: false },
    ],
    ["written", "/dev/termination-log", true, () => "boom", { message: "boom", checkLogs: false }],
    ["empty, fallback", "/dev/termination-log", true, () => "", { message: "", checkLogs: true }],
    ["empty, File", "/dev/termination-log", false, () => "", { message: "", checkLogs: false }],
  ] as [string, string, boolean, () => string, { message: string; checkLogs: boolean }][])("%s", (_name, path, fallback, read, want) => {
    expect(terminationMessageFromFile(mounts, path, fallback, read)).toEqual(want);
  });

  test("asks for at most 4 KiB", () => {
    let asked = 0;
    terminationMessageFromFile(mounts, "/dev/termination-log", false, (_p, max) => String((asked = max)));
    expect(asked).toBe(4096);
  });
});

describe("containerTerminationMessage: file or log tail (upstream convertToKubeContainerStatus)", () => {
  const io = { readFile: (p: string) => (p === "/host/full" ? "from file" : ""), readLogs: (p: string) => `tail of ${p}` };
  const status = (policy: string, exitCode: number, hostPath: string, reason = exitCode === 0 ? "Completed" : "Error") => ({
    annotations: { [PATH_LABEL]: "/dev/termination-log", [POLICY_LABEL]: policy },
    mounts: [{ containerPath: "/dev/termination-log", hostPath }],
    exitCode,
    reason,
    logPath: "/logs/0.log",
  });
  test.each([
    ["File, failed, file written", status("File", 1, "/host/full"), "from file"],
    ["File, failed, file empty: no message", status("File", 1, "/host/empty"), ""],
    ["Fallback, failed, file written: the file wins", status("FallbackToLogsOnError", 1, "/host/full"), "from file"],
    ["Fallback, failed, file empty: the log tail", status("FallbackToLogsOnError", 2, "/host/empty"), "tail of /logs/0.log"],
    ["Fallback, succeeded, file empty: nothing", status("FallbackToLogsOnError", 0, "/host/empty"), ""],
    ["Fallback, could not run: no logs to read", status("FallbackToLogsOnError", 128, "/host/empty", "ContainerCannotRun"), ""],
    ["Fallback, succeeded, file written", status("FallbackToLogsOnError", 0, "/host/full"), "from file"],
  ])("%s", (_n, st, want) => expect(containerTerminationMessage(st, io)).toBe(want));

  test("no mount (a container made before bunlet mounted the file): the logs only on fallback", () => {
    const st = { ...status("FallbackToLogsOnError", 1, "/x"), mounts: [] };
    expect(containerTerminationMessage(st, io)).toBe("tail of /logs/0.log");
    expect(containerTerminationMessage({ ...st, annotations: { [PATH_LABEL]: "/dev/termination-log" } }, io)).toBe("");
  });

  test.each([
    [undefined, "", undefined],
    [undefined, "m", "m"],
    ["OOMKilled", "", "OOMKilled"],
    ["runtime says", "app says", "runtime says: app says"],
  ])("runtime message %j + %j → %j", (runtime, msg, want) => expect(withTerminationMessage(runtime, msg)).toBe(want));
});

describe("lastStringFromLogText (upstream readLastStringFromContainerLogs)", () => {
  test("the content of the last 80 lines, stdout and stderr as written", () => {
    const lines = Array.from({ length: 100 }, (_, i) => criLine(`l${i}`, i % 2 ? "stderr" : "stdout"));
    const out = lastStringFromLogText(`${lines.join("\n")}\n`);
    expect(out).toBe(Array.from({ length: 80 }, (_, i) => `l${i + 20}\n`).join(""));
  });

  test("partial lines are joined; non-CRI lines skipped", () => {
    const text = [criLine("par", "stdout", "P"), criLine("tial"), "garbage", criLine("last", "stderr")].join("\n");
    expect(lastStringFromLogText(text)).toBe("partial\nlast\n");
  });

  test("only the last 2 KiB are kept", () => {
    const lines = Array.from({ length: 40 }, (_, i) => criLine(`${String(i).padStart(2, "0")}${"x".repeat(97)}`));
    const out = lastStringFromLogText(lines.join("\n"));
    expect(Buffer.byteLength(out)).toBe(2048);
    expect(out.endsWith(`39${"x".repeat(97)}\n`)).toBe(true);
  });

  test("custom limits", () => {
    expect(lastStringFromLogText([criLine("a"), criLine("b"), criLine("c")].join("\n"), 2, 3)).toBe("\nc\n");
  });
});

describe("files", () => {
  test("readAtMost: the file's last bytes", () => {
    const p = join(TMP, "big");
    writeFileSync(p, `${"a".repeat(1000)}${"b".repeat(4096)}`);
    expect(readAtMost(p, 4096)).toBe("b".repeat(4096));
    writeFileSync(p, "short");
    expect(readAtMost(p, 4096)).toBe("short");
    expect(() => readAtMost(join(TMP, "none"), 10)).toThrow(/ENOENT/);
  });

  test("readLastStringFromContainerLogs reads far enough back in a long log", () => {
    const p = join(TMP, "0.log");
    // 200 lines of ~1 KiB: more than one 64 KiB read from the end.
    const lines = Array.from({ length: 200 }, (_, i) => criLine(`${i}:${"y".repeat(1000)}`));
    const text = `${lines.join("\n")}\n`;
    writeFileSync(p, text);
    expect(readLastStringFromContainerLogs(p)).toBe(lastStringFromLogText(text));
    expect(readLastStringFromContainerLogs(p).endsWith(`199:${"y".repeat(1000)}\n`)).toBe(true);
    const few = join(TMP, "1.log");
    writeFileSync(few, `${criLine("only")}\n`);
    expect(readLastStringFromContainerLogs(few)).toBe("only\n");
    expect(readLastStringFromContainerLogs(join(TMP, "missing.log"))).toMatch(/^Error on reading termination message from logs: .*ENOENT/);
  });

  test("createTerminationMessageFile: an empty 0666 file under pods/<uid>/containers/<name>, new per instance", () => {
    const root = join(TMP, "root");
    const old = process.umask(0o077);
    try {
      const a = createTerminationMessageFile(root, "uid-1", "app", () => 0.5)!;
      expect(a).toBe(join(root, "pods/uid-1/containers/app/80000000"));
      expect(statSync(a).size).toBe(0);
      expect(statSync(a).mode & 0o777).toBe(0o666);
      const b = createTerminationMessageFile(root, "uid-1", "app")!;
      expect(b).not.toBe(a);
      expect(readdirSync(join(root, "pods/uid-1/containers/app")).length).toBe(2);
    } finally {
      process.umask(old);
    }
  });

  test("createTerminationMessageFile: a failure is no mount, not a crash", () => {
    const blocked = join(TMP, "blocked");
    mkdirSync(blocked, { recursive: true });
    writeFileSync(join(blocked, "pods"), "a file where a directory should be");
    expect(createTerminationMessageFile(blocked, "u", "c")).toBeUndefined();
  });
});

describe("generateContainerConfig mounts the file", () => {
  const pod = (c: KubeContainer): KubePod => ({ metadata: { name: "p", namespace: "ns", uid: "u1" }, spec: { containers: [c] } });
  const inputs = (file?: string): ConfigInputs => ({
    podLogsDir: "/var/log/pods",
    memoryCapacityBytes: 2 ** 30,
    volumeHostPath: () => "/srv/v",
    ...(file ? { terminationMessageFile: () => file } : {}),
  });
  const ref = { name: "p", namespace: "ns", uid: "u1" };

  test.each([
    ["default path", undefined, "/dev/termination-log"],
    ["empty path is the default", "", "/dev/termination-log"],
    ["custom path", "/tmp/why", "/tmp/why"],
  ])("%s", (_n, path, want) => {
    const c: KubeContainer = {
      name: "c",
      image: "img",
      volumeMounts: [{ name: "v", mountPath: "/v" }],
      ...(path !== undefined ? { terminationMessagePath: path } : {}),
    };
    const cfg = generateContainerConfig(pod(c), ref, c, 0, inputs("/root/pods/u1/containers/c/0000abcd"));
    expect(cfg.mounts!.at(-1)).toEqual({ containerPath: want, hostPath: "/root/pods/u1/containers/c/0000abcd", readonly: false });
    expect(cfg.mounts![0]!.containerPath).toBe("/v");
    expect(cfg.annotations![PATH_LABEL]).toBe(want);
  });

  test("without a file (creation failed): no mount", () => {
    const c: KubeContainer = { name: "c", image: "img" };
    expect(generateContainerConfig(pod(c), ref, c, 0, inputs()).mounts).toEqual([]);
  });

  test("a config refused does not create the file", () => {
    const c: KubeContainer = { name: "c", image: "img", volumeMounts: [{ name: "v", mountPath: "/v" }] };
    let created = 0;
    const bad: ConfigInputs = { ...inputs(), volumeHostPath: () => undefined, terminationMessageFile: () => `/f${++created}` };
    expect(() => generateContainerConfig(pod(c), ref, c, 0, bad)).toThrow(/no such volume/);
    expect(created).toBe(0);
  });
});

describe("truncateTerminationMessages (upstream normalizeStatus)", () => {
  const terminated = (message: string) => ({ terminated: { exitCode: 1, reason: "Error", message, containerID: "x" } });
  const cs = (name: string, message: string): ContainerStatus => ({
    name,
    state: terminated(message),
    lastState: terminated(message),
    ready: false,
    restartCount: 0,
    image: "img",
    imageID: "",
  });
  const podOf = (regular: number, init: number) =>
    ({
      metadata: { name: "p", namespace: "ns", uid: "u" },
      spec: {
        containers: Array.from({ length: regular }, (_, i) => ({ name: `c${i}`, image: "img" })),
        ...(init ? { initContainers: Array.from({ length: init }, (_, i) => ({ name: `i${i}`, image: "img" })) } : {}),
      },
    }) as unknown as Pod;

  test("one container keeps its whole 4 KiB", () => {
    const s: PodStatus = { phase: "Failed", containerStatuses: [cs("c0", "m".repeat(4096))] };
    expect(truncateTerminationMessages(podOf(1, 0), s).containerStatuses![0]!.state.terminated!.message!.length).toBe(4096);
  });

  test("3 regular + 1 init: 12 KiB / 4 = 3 KiB each, state and lastState, init too", () => {
    const s: PodStatus = {
      phase: "Failed",
      initContainerStatuses: [cs("i0", "i".repeat(4096))],
      containerStatuses: ["c0", "c1", "c2"].map((n) => cs(n, "m".repeat(4096))),
    };
    const out = truncateTerminationMessages(podOf(3, 1), s);
    for (const c of [...out.initContainerStatuses!, ...out.containerStatuses!]) {
      expect(c.state.terminated!.message!.length).toBe(3072);
      expect(c.lastState.terminated!.message!.length).toBe(3072);
    }
    expect(s.containerStatuses![0]!.state.terminated!.message!.length).toBe(4096); // input untouched
  });

  test.each([
    ["short", 10, "short"],
    ["héllo", 2, "h\uFFFD"],
    ["héllo", 3, "hé"],
  ])("truncateBytes(%j, %d) = %j", (s, n, want) => expect(truncateBytes(s, n)).toBe(want));
});
