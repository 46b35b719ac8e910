// JSON.parse whose error never quotes the input. Bun's parser names the token it choked on
// (`Unexpected identifier "s3cr3t"`), so a truncated Secret, ExecCredential or docker config would put
// a credential into the error — and errors end up in logs. Used wherever the text may hold one.

export class JsonSyntaxError extends Error {
  override name = "JsonSyntaxError";
}

/** JSON.parse(text); on a syntax error, an error naming `what` and the text's size only. */
export function parseJsonRedacted(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new JsonSyntaxError(`${what}: not valid JSON (${Buffer.byteLength(text)} bytes; content not shown, it may hold credentials)`);
  }
}
