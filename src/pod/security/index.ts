// Pod security as the kubelet enforces it: security contexts → CRI, seccomp, AppArmor, sysctls.
export * from "./apparmor.ts";
export * from "./seccomp.ts";
export * from "./security-context.ts";
export * from "./sysctl.ts";
