// A TCP forwarder a scenario puts between the node and its API server, to cut the link and restore it:
//   cut("reset")     every connection is closed and new ones are closed at once (the far end refuses:
//                    a link that is down with the route gone, the client errs at once);
//   cut("blackhole") nothing is forwarded and nothing is closed (packets dropped: the client waits);
//   restore()        forwarding again — held connections resume, as TCP resumes after a partition.
// Loopback only; the TLS inside is the API server's, untouched.
import { createServer, connect, type Server, type Socket } from "node:net";

export type CutMode = "reset" | "blackhole";

export interface TcpProxy {
  /** The port it listens on, 127.0.0.1. */
  readonly port: number;
  cut(mode?: CutMode): void;
  restore(): void;
  /** Connections forwarded so far (accepted while the link was up, or resumed). */
  forwarded(): number;
  stop(): Promise<void>;
}

interface Pair {
  client: Socket;
  upstream?: Socket;
}

/** Forwards 127.0.0.1:<port> to `target()` (read at each connection) until cut; see the file header. */
export async function startTcpProxy(target: () => { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<Pair>();
  let state: "up" | CutMode = "up";
  let forwarded = 0;

  const close = (pair: Pair) => {
    pairs.delete(pair);
    pair.client.destroy();
    pair.upstream?.destroy();
  };
  const forward = (pair: Pair) => {
    forwarded++;
    const { host, port } = target();
    const upstream = (pair.upstream = connect(port, host));
    upstream.on("error", () => close(pair));
    upstream.on("close", () => close(pair));
    pair.client.pipe(upstream);
    upstream.pipe(pair.client);
    pair.client.resume();
  };
  const pause = (pair: Pair) => {
    pair.client.unpipe();
    pair.upstream?.unpipe();
    pair.client.pause();
    pair.upstream?.pause();
  };
  const resume = (pair: Pair) => {
    if (!pair.upstream) return forward(pair);
    pair.client.pipe(pair.upstream);
    pair.upstream.pipe(pair.client);
  };

  const server: Server = createServer({ pauseOnConnect: true }, (client) => {
    if (state === "reset") return void client.destroy();
    const pair: Pair = { client };
    pairs.add(pair);
    client.on("error", () => close(pair));
    client.on("close", () => close(pair));
    if (state === "up") forward(pair);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const port = (server.address() as { port: number }).port;

  return {
    port,
    cut(mode = "reset") {
      state = mode;
      for (const p of [...pairs]) mode === "reset" ? close(p) : pause(p);
    },
    restore() {
      const was = state;
      state = "up";
      if (was === "blackhole") for (const p of pairs) resume(p);
    },
    forwarded: () => forwarded,
    async stop() {
      for (const p of [...pairs]) close(p);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
