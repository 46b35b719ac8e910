// One event to the sink, as client-go's recordToSink/recordEvent: correlate; PATCH the count of an
// event written before (404: it was deleted meanwhile → POST again) or POST a new one; remember the
// server's copy. An API error is final (AlreadyExists silently, others logged: "will not retry");
// anything else (the API server unreachable) is retried up to maxTries, sleepMs apart, the first
// wait randomised so that nodes do not all come back at once after an outage.
import { ApiError, isAlreadyExists, isNotFound } from "../kube/errors.ts";
import { kv, log } from "../log.ts";
import type { CorrelateResult, EventCorrelator } from "./correlator.ts";
import type { CoreEvent, EventSink } from "./types.ts";

export interface SinkWriterDeps {
  sink: EventSink;
  correlator: EventCorrelator;
  sleep(ms: number): Promise<void>;
  stopped(): boolean;
  maxTries: number;
  sleepMs: number;
  rand(): number;
}

export const refText = (e: CoreEvent) => (e.involvedObject.namespace ? `${e.involvedObject.namespace}/${e.involvedObject.name}` : e.involvedObject.name);

/** recordEvent: true when done with the event (written, or refused for good). */
async function recordEvent(r: CorrelateResult, d: SinkWriterDeps): Promise<boolean> {
  const ev = r.event!;
  const update = ev.count > 1 && r.patch !== undefined;
  let written: CoreEvent | undefined;
  let err: unknown;
  if (update) {
    try {
      written = await d.sink.patch(ev, r.patch!);
    } catch (e) {
      err = e;
    }
  }
  if (!update || isNotFound(err)) {
    err = undefined;
    try {
      written = await d.sink.create({ ...ev, metadata: { ...ev.metadata, resourceVersion: undefined } });
    } catch (e) {
      err = e;
    }
  }
  if (err === undefined) {
    d.correlator.updateState(written ?? ev);
    return true;
  }
  if (err instanceof ApiError) {
    if (!isAlreadyExists(err)) log.error(`Server rejected event (will not retry!) ${kv({ object: refText(ev), reason: ev.reason, error: err.message })}`);
    return true;
  }
  log.error(
    `Unable to write event (may retry after sleeping) ${kv({ object: refText(ev), reason: ev.reason, error: (err as Error)?.message ?? String(err) })}`,
  );
  return false;
}

export async function recordToSink(e: CoreEvent, d: SinkWriterDeps): Promise<void> {
  const r = d.correlator.correlate(e);
  if (r.skip || !r.event) return;
  for (let tries = 1; !d.stopped(); tries++) {
    if (await recordEvent(r, d)) return;
    if (tries >= d.maxTries) {
      log.error(`Unable to write event (retry limit exceeded!) ${kv({ object: refText(e), reason: e.reason })}`);
      return;
    }
    await d.sleep(tries === 1 ? d.sleepMs * d.rand() : d.sleepMs);
  }
}
