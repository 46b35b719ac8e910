// TLS bootstrap of the kubelet's client identity (upstream pkg/kubelet/certificate/bootstrap).
export { loadClientCert, isClientConfigStillValid, storeClientCert, BootstrapError, KUBELET_CLIENT_SIGNER, CURRENT_CLIENT_CERT, type BootstrapOpts } from "./bootstrap.ts";
export { createCsrPem, generateKeyPem, keyFromPem, type Subject } from "./csr.ts";
export { createCertRotation, rotationDeadlineMs, type CertRotation } from "./rotation.ts";
