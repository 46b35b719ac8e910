// JSON.parse for documents that may carry secrets (API responses with Secrets and tokens, watch
// events, exec credential plugins' output, .dockerconfigjson). The engine's own error quotes the
// text near the fault ('JSON Parse error: Unexpected identifier "s3cr3t"'), and parse errors end up
// in log lines and events: this one names the document and its size, never its content.

export class JsonParseError extends Error {
  override name = "JsonParseError";
}

/** Parses `text`; on malformed JSON throws a JsonParseError saying what was parsed, not what it said. */
export function parseJsonQuietly(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new JsonParseError(`${what}: not valid JSON (${Buffer.byteLength(text)} bytes; content not shown, it may hold credentials)`);
  }
}
