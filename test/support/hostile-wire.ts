// Sending hostile requests (hostile.ts) to a port as raw bytes, and watching the process that serves
// them: each case on its own connection (half-closed after sending when asked), the status line read
// back (0 when the server closed without an answer), 8 at a time; RSS and open fds from /proc.
import type net from "node:net";
import { readdirSync, readFileSync } from "node:fs";
import type { HostileCase, SlowClient } from "./hostile.ts";

export type Connect = () => net.Socket;

/** Sends one case; resolves with the status (0: closed without an answer). */
export function sendCase(connect: Connect, c: HostileCase, halfClose: boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = connect();
    let head = "";
    const timer = setTimeout(() => (s.destroy(), reject(new Error(`no answer within 30 s: ${c.what}`))), 30_000);
    const finish = () => {
      clearTimeout(timer);
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(head);
      resolve(m ? Number(m[1]) : 0);
    };
    s.on("data", (d) => {
      if (head.length < 64) head += d.toString("latin1");
      if (/^HTTP\/1\.[01] \d{3}/.test(head)) s.destroy();
    });
    s.on("close", finish);
    s.on("error", () => {});
    if (halfClose) s.end(c.bytes);
    else s.write(c.bytes);
  });
}

/** Sends every case, `parallel` at a time (every other one half-closed); returns what got an unexpected answer. */
export async function runCases(cases: HostileCase[], connect: Connect, parallel = 8): Promise<string[]> {
  const wrong: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < cases.length) {
        const i = next++;
        const c = cases[i]!;
        const status = await sendCase(connect, c, i % 2 === 1);
        if (!c.ok.includes(status)) wrong.push(`${c.what}: got ${status}, want one of ${c.ok.join("/")}`);
      }
    }),
  );
  return wrong;
}

/** Opens `copies` connections per slow client; resolves when the server has closed them all, with how long it took. */
export async function slowClientsClosed(
  connect: (onOpen: (s: net.Socket) => void) => net.Socket,
  clients: SlowClient[],
  copies: number,
  boundMs: number,
): Promise<number> {
  const t0 = performance.now();
  const closed = clients.flatMap((c) =>
    Array.from(
      { length: copies },
      () =>
        new Promise<void>((resolve) => {
          let drip: ReturnType<typeof setInterval> | undefined;
          const s = connect((open) => {
            if (c.first) open.write(c.first);
            if (c.drip) drip = setInterval(() => open.write(c.drip!), 1000);
          });
          s.on("error", () => {});
          s.on("close", () => (clearInterval(drip), resolve()));
        }),
    ),
  );
  await Promise.race([Promise.all(closed), Bun.sleep(boundMs).then(() => Promise.reject(new Error(`slow clients still connected after ${boundMs} ms`)))]);
  return performance.now() - t0;
}

export const procRssKiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]);
export const procFds = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;

/**
 * RSS once the garbage of a burst may have been collected: the lowest of samples taken every 100 ms
 * for `ms` (a single sample lands on the collector's peaks, tens of MiB apart; a leak raises the floor).
 */
export async function settledRssKiB(pid: number, ms = 3000): Promise<number> {
  let low = procRssKiB(pid);
  for (let t = 0; t < ms; t += 100) {
    await Bun.sleep(100);
    low = Math.min(low, procRssKiB(pid));
  }
  return low;
}
