// The API client (upstream: client-go rest + tools/clientcmd + pkg/kubelet/certificate): kubeconfig,
// credentials (cert, token, tokenFile, exec plugins), a QPS/burst token bucket, timeouts, Retry-After
// retries, JSON with zod at the edge, and the kubelet's TLS bootstrap.
export { createKubeClient, type KubeClient, type ClientOpts, type RequestOpts, type RequestAttempt, type RequestObserver } from "./client.ts";
export { reconnectObserver } from "./reconnect.ts";
export { ApiError, isAlreadyExists, isConflict, isGone, isNotFound } from "./errors.ts";
export { loadKubeconfig, parseKubeconfig, renderKubeconfig, KubeconfigError, type RestConfig } from "./kubeconfig.ts";
export { tokenBucket, unlimited, type RateLimiter } from "./rate-limiter.ts";
export * from "./types.ts";
export { watchEvents, type WatchEvent } from "./watch.ts";
export { labelSelectorMatcher, type LabelMatcher, type LabelSelector, type LabelSelectorRequirement } from "./label-selector.ts";
