// Events (upstream client-go tools/record + pkg/kubelet/events): the recorder the kubelet's parts
// record through, upstream's correlator (aggregation, counting, spam filter), a bounded non-blocking
// queue and the core/v1 API sink.
export * from "./types.ts";
export * as reasons from "./reasons.ts";
export { createEventBroadcaster, type EventBroadcaster } from "./broadcaster.ts";
export { createEventCorrelator, AGGREGATE_PREFIX, type EventCorrelator } from "./correlator.ts";
export { apiEventSink } from "./sink.ts";
