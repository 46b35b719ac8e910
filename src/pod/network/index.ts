// A pod's names, /etc/hosts and DNS as the kubelet makes them (upstream pkg/kubelet/network/dns, kubelet_pods.go).
export * from "./dns.ts";
export * from "./hosts.ts";
export * from "./names.ts";
