import { describe, expect, test } from "bun:test";
import { GrpcError } from "../../../src/cri/grpc.ts";
import type { RuntimePod } from "../../../src/pod/runtime.ts";
import { createCriStreamingHost, PodNotFoundError, StreamingError, streamingError, type StreamTarget } from "../../../src/server/streaming/index.ts";

const pods = [
  {
    metadata: { namespace: "default", name: "web", uid: "u1" },
    spec: { containers: [{ name: "app" }, { name: "shell", tty: true }], initContainers: [{ name: "init" }] },
  },
];
const runtimePods: RuntimePod[] = [
  {
    uid: "u1",
    name: "web",
    namespace: "default",
    sandboxIds: ["sb-new", "sb-old"],
    containers: [
      { id: "c-old", name: "app", state: "exited" },
      { id: "c-app", name: "app", state: "running" },
      { id: "c-shell", name: "shell", state: "running" },
    ],
  },
];
const calls: unknown[][] = [];
const cri = {
  exec: async (...a: unknown[]) => (calls.push(["exec", ...a]), "http://127.0.0.1:1/exec/t"),
  attach: async (...a: unknown[]) => (calls.push(["attach", ...a]), "http://127.0.0.1:1/attach/t"),
  portForward: async (...a: unknown[]) => (calls.push(["portForward", ...a]), "http://127.0.0.1:1/portforward/t"),
  execSync: async (id: string, cmd: string[], _timeout: number, signal?: AbortSignal) => (
    calls.push(["execSync", id, signal]),
    { stdout: Buffer.from(`out ${id}\n`), stderr: Buffer.from(cmd[0] === "false" ? "bad\n" : ""), exitCode: cmd[0] === "false" ? 1 : 0 }
  ),
};
const host = createCriStreamingHost({ getPods: () => pods, getRuntimePods: async () => runtimePods, cri });
const t = (over: Partial<StreamTarget>): StreamTarget => ({ kind: "exec", namespace: "default", pod: "web", uid: "", container: "app", ...over });
const streams = { stdin: true, stdout: true, stderr: true, tty: false };

describe("the CRI streaming host", () => {
  test("exec: the running container of that name", async () => {
    expect(await host.getExec(t({}), ["ls"], streams)).toBe("http://127.0.0.1:1/exec/t");
    expect(calls.at(-1)).toEqual(["exec", "c-app", ["ls"], streams]);
  });
  test("attach: TTY from the container's spec, stderr off with it", async () => {
    await host.getAttach(t({ kind: "attach", container: "shell" }), streams);
    expect(calls.at(-1)).toEqual(["attach", "c-shell", { stdin: true, stdout: true, stderr: false, tty: true }]);
    await host.getAttach(t({ kind: "attach" }), { ...streams, tty: true });
    expect(calls.at(-1)).toEqual(["attach", "c-app", { ...streams, tty: false }]);
  });
  test("port-forward: the pod's newest sandbox", async () => {
    await host.getPortForward(t({ kind: "portForward", container: "" }), [80]);
    expect(calls.at(-1)).toEqual(["portForward", "sb-new", [80]]);
  });
  test("run: stdout then stderr; a non-zero exit is an error with upstream's text", async () => {
    expect(Buffer.from(await host.runInContainer(t({ kind: "run" }), ["id"])).toString()).toBe("out c-app\n");
    await expect(host.runInContainer(t({ kind: "run" }), ["false", "x"])).rejects.toThrow("command 'false x' exited with 1: bad\n");
  });
  test("run: the request's signal reaches ExecSync (the runtime kills the command when the client goes)", async () => {
    const abort = new AbortController();
    await host.runInContainer(t({ kind: "run" }), ["id"], abort.signal);
    expect(calls.at(-1)).toEqual(["execSync", "c-app", abort.signal]);
  });
  test.each([
    [t({ pod: "nope" }), PodNotFoundError, "pod does not exist"],
    [t({ namespace: "other" }), PodNotFoundError, "pod does not exist"],
    [t({ uid: "u2" }), PodNotFoundError, "pod does not exist"],
    [t({ container: "init" }), StreamingError, `container not found ("init")`],
    [t({ container: "ghost" }), StreamingError, `container not found ("ghost")`],
  ])("exec %o → %s", async (target, cls, msg) => {
    const err = await host.getExec(target, ["ls"], streams).catch((e) => e);
    expect(err).toBeInstanceOf(cls);
    expect(err.message).toBe(msg);
  });
  test("attach to a container the pod does not declare", async () => {
    await expect(host.getAttach(t({ kind: "attach", container: "ghost" }), streams)).rejects.toThrow("container ghost not found in pod web_default");
  });
});

describe("errors → status (upstream streaming.WriteError)", () => {
  test.each([
    ["pod not found", 404, new PodNotFoundError("pod does not exist")],
    ["gRPC NotFound", 404, new GrpcError("Exec", 5, "not found")],
    ["gRPC ResourceExhausted", 429, new GrpcError("Exec", 8, "too many")],
    ["gRPC FailedPrecondition", 500, new GrpcError("Exec", 9, "container is not running")],
    ["container not found", 500, new StreamingError("container not found")],
    ["anything else", 500, new Error("boom")],
  ] as const)("%s → %d", (_name, status, err) => expect(streamingError(err).status).toBe(status));
});
