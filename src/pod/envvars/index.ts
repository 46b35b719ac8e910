// The environment variables the kubelet gives every container for the cluster's services (upstream pkg/kubelet/envvars).
export * from "./envvars.ts";
