// The kubelet's streaming endpoints: /exec, /attach, /portForward (upgrade requests proxied onto the
// container runtime's streaming server) and /run, over the CRI (upstream pkg/kubelet/server).
export { createCriStreamingHost, PodNotFoundError, StreamingError, type StreamingHost, type CriStreamingHostDeps } from "./host.ts";
export { createStreamingUpgrade, streamingRoutes, resolveStream, streamingError, type UpgradeHook, type StreamingUpgradeOpts } from "./handler.ts";
export { parseStreamPath, parseStreamOptions, parsePortForwardPorts, StreamParamError, type StreamTarget, type StreamKind } from "./params.ts";
export { proxyUpgrade, backendRequestHead, HeadSmugglingError } from "./upgrade-proxy.ts";
export { headOf, isUpgradeRequest, isWebSocketRequest, type RequestHead } from "./request-head.ts";
