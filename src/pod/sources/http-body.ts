// Reading a staticPodURL response body within bounds (a 600 MB body must not be read whole). The body is streamed and the request aborted as soon as it passes the cap; a declared
// Content-Length above the cap is refused before any byte is read. Strict UTF-8, as for files.
import { MAX_MANIFEST_BYTES } from "./read-manifest.ts";

export class BodyTooLargeError extends Error {
  override name = "BodyTooLargeError";
}

/** Reads `res`'s body as text, at most `maxBytes`; `abort` cancels the request past the cap. */
export async function readBoundedBody(res: Response, abort: () => void, maxBytes = MAX_MANIFEST_BYTES): Promise<string> {
  const tooLarge = (n: number | string) =>
    new BodyTooLargeError(`response body is ${n} bytes, more than the ${maxBytes} bytes bunlet reads (MAX_MANIFEST_BYTES)`);
  const declared = Number(res.headers.get("content-length") ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    abort();
    throw tooLarge(declared);
  }
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let n = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    n += value.byteLength;
    if (n > maxBytes) {
      abort();
      await reader.cancel().catch(() => undefined);
      throw tooLarge(`more than ${maxBytes}`);
    }
    chunks.push(value);
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks, n));
  } catch {
    throw new Error("response body is not valid UTF-8 text");
  }
}
