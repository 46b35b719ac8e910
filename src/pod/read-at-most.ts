// A response body read no further than a cap (upstream k8s.io/utils/io ReadAtMost, as pkg/probe/http
// and pkg/kubelet/lifecycle use it with maxRespBodyLength = 10 KiB): the stream is cancelled once the
// cap is reached, so a container answering a probe or a hook with an endless body costs the node
// 10 KiB, not its memory.

/** upstream maxRespBodyLength of probes and lifecycle hooks. */
export const MAX_RESP_BODY_LENGTH = 10 * 1024;

/** The first `maxBytes` of `res`'s body, and whether there was more (the rest is never read). */
export async function readAtMost(res: Response, maxBytes = MAX_RESP_BODY_LENGTH): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  if (!res.body) return { bytes: new Uint8Array(0), truncated: false };
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let n = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { bytes: Buffer.concat(chunks, n), truncated: false };
      const room = maxBytes - n;
      if (value.byteLength > room) {
        chunks.push(value.subarray(0, room));
        await reader.cancel().catch(() => undefined);
        return { bytes: Buffer.concat(chunks, maxBytes), truncated: true };
      }
      chunks.push(value);
      n += value.byteLength;
    }
  } finally {
    reader.releaseLock();
  }
}
