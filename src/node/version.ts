// The version bunlet reports as status.nodeInfo.kubeletVersion: the kubelet minor it follows, with
// bunlet's own version as semver build metadata, so version-skew checks parse it as v1.31.0.
import pkg from "../../package.json" with { type: "json" };

export const KUBELET_COMPAT_VERSION = "v1.31.0";
export const kubeletVersion = (): string => `${KUBELET_COMPAT_VERSION}+bunlet.${pkg.version}`;
