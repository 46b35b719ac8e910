// The direct signaller against real processes (children of this test standing in for container
// inits) and a fake CRI giving their PIDs the way containerd's verbose status does.
import { afterEach, describe, expect, test } from "bun:test";
import type { CriClient } from "../../../src/cri/client.ts";
import { createDirectSignaller, STARTED_RETAIN_GRACE_MS, type DirectSignalEvent, type DirectSignaller } from "../../../src/pod/kuberuntime/direct-signal.ts";
import { close } from "../../../ffi/libc.ts";
import { pollUntil } from "../../support/wait.ts";

const children: Bun.Subprocess[] = [];
const signallers: DirectSignaller[] = [];
afterEach(() => {
  for (const s of signallers.splice(0)) s.close();
  for (const c of children.splice(0)) c.kill("SIGKILL");
});

function setup(o: { stopSignal?: string; inCgroup?: boolean; exited?: string; now?: () => number } = {}) {
  const child = Bun.spawn(["sleep", "60"], { stdout: "ignore", stderr: "ignore" });
  children.push(child);
  const calls: string[] = [];
  const cri = {
    containerStatus: async (id: string, verbose: boolean) => {
      calls.push(`ContainerStatus ${id} verbose=${verbose}`);
      return {
        status: { id, state: id === o.exited ? "CONTAINER_EXITED" : "CONTAINER_RUNNING", imageRef: "sha256:img", image: { image: "img:1" } },
        info: { info: JSON.stringify({ pid: child.pid }) },
      };
    },
    imageStatusInfo: async (ref: string) => {
      calls.push(`ImageStatus ${ref}`);
      return { image: null, info: { info: JSON.stringify({ imageSpec: { config: o.stopSignal ? { StopSignal: o.stopSignal } : {} } }) } };
    },
  } as unknown as Pick<CriClient, "containerStatus" | "imageStatusInfo">;
  const events: DirectSignalEvent[] = [];
  const closed: number[] = [];
  const s = createDirectSignaller({
    cri,
    now: o.now ?? (() => 1234),
    onSignal: (e) => events.push(e),
    procCgroup: (pid) => (o.inCgroup === false ? "12:memory:/elsewhere\n" : `12:memory:/kubepods/pod/ctr-${pid}\n`),
    closeFd: (fd) => {
      closed.push(fd);
      close(fd);
    },
  });
  signallers.push(s);
  const id = `ctr-${child.pid}`;
  return { child, s, id, calls, events, closed };
}

describe("direct signaller", () => {
  test("a tracked container's init gets SIGTERM for a 1 s stop, reported with its pid", async () => {
    const { child, s, id, events } = setup();
    s.track(id, "uid-1");
    await pollUntil(() => s.size === 1, "the container to be learnt", 5000);
    const e = s.signal(id, 1);
    expect(e).toEqual({ containerId: id, podUid: "uid-1", pid: child.pid, signal: 15, atMs: 1234 });
    expect(events).toEqual([e!]);
    await child.exited;
    expect(child.signalCode).toBe("SIGTERM");
  });

  test("grace 0 sends SIGKILL; the image's StopSignal is used otherwise", async () => {
    const a = setup();
    a.s.track(a.id, "u");
    await pollUntil(() => a.s.size === 1, "learnt", 5000);
    expect(a.s.signal(a.id, 0)?.signal).toBe(9);
    await a.child.exited;
    expect(a.child.signalCode).toBe("SIGKILL");

    const b = setup({ stopSignal: "SIGINT" });
    b.s.track(b.id, "u");
    await pollUntil(() => b.s.size === 1, "learnt", 5000);
    expect(b.s.signal(b.id, 1)?.signal).toBe(2);
    await b.child.exited;
    expect(b.child.signalCode).toBe("SIGINT");
  });

  test("a stop granting more than 1 s is left to the runtime alone", async () => {
    const { child, s, id, events } = setup();
    s.track(id, "u");
    await pollUntil(() => s.size === 1, "learnt", 5000);
    expect(s.signal(id, 2)).toBeUndefined();
    expect(events).toEqual([]);
    expect(child.exitCode).toBeNull();
    expect(child.signalCode).toBeNull();
  });

  test("a pid that is not in the container's cgroup is never signalled", async () => {
    const { s, id, calls, closed } = setup({ inCgroup: false });
    s.track(id, "u");
    await pollUntil(() => closed.length === 1, "the pidfd to be closed after the failed check", 5000);
    expect(calls).toEqual([`ContainerStatus ${id} verbose=true`, "ImageStatus sha256:img"]);
    expect(s.size).toBe(0);
    expect(s.signal(id, 1)).toBeUndefined();
  });

  test("tracking is idempotent; retain forgets and closes what stopped running", async () => {
    const { s, id, calls, closed } = setup();
    s.track(id, "u");
    s.track(id, "u");
    await pollUntil(() => s.size === 1, "learnt", 5000);
    expect(calls.filter((c) => c.startsWith("ContainerStatus"))).toHaveLength(1);
    s.retain(new Set([id]));
    expect(s.size).toBe(1);
    s.retain(new Set());
    expect(s.size).toBe(0);
    expect(closed).toHaveLength(1);
    expect(s.signal(id, 1)).toBeUndefined();
  });

  test("a learnt container is announced (onKnown) with its pod, once it is signallable", async () => {
    const { s, id } = setup();
    const told: string[] = [];
    s.onKnown!((uid) => told.push(`${uid}:${s.size}`));
    s.track(id, "uid-7");
    await pollUntil(() => told.length === 1, "the announcement", 5000);
    expect(told).toEqual(["uid-7:1"]);
    expect(s.knownContainers!("uid-7").map((k) => k.containerId)).toEqual([id]);
  });

  test("a container tracked at its start survives a retain from a listing taken before it, for a while", async () => {
    let t = 10_000;
    const { s, id } = setup({ now: () => t });
    s.track(id, "u", true);
    await pollUntil(() => s.size === 1, "learnt", 5000);
    s.retain(new Set()); // a relist that began before StartContainer returned
    expect(s.size).toBe(1);
    s.retain(new Set([id])); // listed: an ordinary container from now on
    s.retain(new Set());
    expect(s.size).toBe(0);
    s.track(id, "u", true);
    await pollUntil(() => s.size === 1, "learnt again", 5000);
    t += STARTED_RETAIN_GRACE_MS;
    s.retain(new Set()); // never listed within the grace: gone
    expect(s.size).toBe(0);
  });

  test("a container that exited before its stop: nothing sent, no error", async () => {
    const { child, s, id } = setup();
    s.track(id, "u");
    await pollUntil(() => s.size === 1, "learnt", 5000);
    child.kill("SIGKILL");
    await child.exited;
    expect(s.signal(id, 1)).toBeUndefined();
    expect(s.size).toBe(0);
  });

  test("a container not running in its status is not tracked", async () => {
    const { s, id, calls } = setup({ exited: "ctr-gone" });
    s.track("ctr-gone", "u");
    s.track(id, "u"); // looked up after it: once this one is learnt, the first lookup is over
    await pollUntil(() => s.size === 1, "the running container to be learnt", 5000);
    expect(s.signal("ctr-gone", 1)).toBeUndefined();
    expect(calls.filter((c) => c.startsWith("ContainerStatus"))).toEqual(["ContainerStatus ctr-gone verbose=true", `ContainerStatus ${id} verbose=true`]);
  });
});

test("a runtime error while learning a container is retried at the next track", async () => {
  const child = Bun.spawn(["sleep", "60"], { stdout: "ignore", stderr: "ignore" });
  children.push(child);
  let fail = true;
  const cri = {
    containerStatus: async (id: string) => {
      if (fail) throw new Error("Unavailable");
      return { status: { id, state: "CONTAINER_RUNNING", imageRef: "sha256:img" }, info: { info: JSON.stringify({ pid: child.pid }) } };
    },
    imageStatusInfo: async () => ({ image: null, info: { info: JSON.stringify({ imageSpec: { config: {} } }) } }),
  } as unknown as Pick<CriClient, "containerStatus" | "imageStatusInfo">;
  const s = createDirectSignaller({ cri, procCgroup: (pid) => `12:memory:/k/ctr-${pid}\n` });
  signallers.push(s);
  const id = `ctr-${child.pid}`;
  let attempts = 0;
  const original = cri.containerStatus;
  cri.containerStatus = ((...a: Parameters<typeof original>) => (attempts++, original(...a))) as typeof original;
  s.track(id, "u");
  await pollUntil(() => attempts === 1, "the failing lookup", 5000);
  fail = false;
  await pollUntil(() => (s.track(id, "u"), s.size === 1), "the retried lookup to learn it", 5000);
  expect(s.signal(id, 1)?.pid).toBe(child.pid);
});
