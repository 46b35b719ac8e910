// The scenarios' TCP proxy (scripts/chaos/lib/tcp-proxy.ts) on loopback: forwards, cuts (reset or
// blackhole) and restores, as api-partition-reboot relies on.
import { afterEach, describe, expect, test } from "bun:test";
import { connect, createServer, type Server, type Socket } from "node:net";
import { startTcpProxy, type TcpProxy } from "../../scripts/chaos/lib/tcp-proxy.ts";

let echo: Server;
let proxy: TcpProxy;
const clients: Socket[] = [];

async function setUp(): Promise<void> {
  echo = createServer((s) => s.pipe(s));
  await new Promise<void>((r) => echo.listen(0, "127.0.0.1", r));
  const port = (echo.address() as { port: number }).port;
  proxy = await startTcpProxy(() => ({ host: "127.0.0.1", port }));
}
afterEach(async () => {
  for (const c of clients) c.destroy();
  await proxy.stop();
  await new Promise((r) => echo.close(r));
});

/** A client through the proxy, with what it received and whether it was closed. */
async function client() {
  const s = connect(proxy.port, "127.0.0.1");
  clients.push(s);
  const got: string[] = [];
  let closed = false;
  s.on("data", (d) => got.push(d.toString()));
  s.on("close", () => (closed = true));
  s.on("error", () => {});
  await new Promise((r) => s.once("connect", r));
  return { s, text: () => got.join(""), closed: () => closed };
}
const until = async (cond: () => boolean) => {
  for (let i = 0; i < 200 && !cond(); i++) await Bun.sleep(10);
  return cond();
};

describe("tcp proxy", () => {
  test("forwards both ways", async () => {
    await setUp();
    const c = await client();
    c.s.write("ping");
    expect(await until(() => c.text() === "ping")).toBe(true);
    expect(proxy.forwarded()).toBe(1);
  });

  test("reset: open connections are closed, new ones closed at once; restored: forwarded again", async () => {
    await setUp();
    const before = await client();
    proxy.cut("reset");
    expect(await until(before.closed)).toBe(true);
    const during = await client();
    expect(await until(during.closed)).toBe(true);
    proxy.restore();
    const after = await client();
    after.s.write("back");
    expect(await until(() => after.text() === "back")).toBe(true);
  });

  test("blackhole: nothing passes and nothing is closed; restored, held connections carry on", async () => {
    await setUp();
    const open = await client();
    proxy.cut("blackhole");
    const held = await client();
    open.s.write("a");
    held.s.write("b");
    await Bun.sleep(100);
    expect([open.text(), held.text(), open.closed(), held.closed()]).toEqual(["", "", false, false]);
    proxy.restore();
    expect(await until(() => open.text() === "a" && held.text() === "b")).toBe(true);
  });
});
