// TLS bootstrap of the kubelet's client identity (upstream pkg/kubelet/certificate/bootstrap).
export {
  loadClientCert,
  bootstrapClientCert,
  isClientConfigStillValid,
  storeClientCert,
  BootstrapError,
  KUBELET_CLIENT_SIGNER,
  CURRENT_CLIENT_CERT,
  type BootstrapOpts,
} from "./bootstrap.ts";
export { createCsrPem, generateKeyPem, ipBytes, keyFromPem, type AltNames, type Subject } from "./csr.ts";
export { createCertRotation, rotationDeadlineMs, type CertRotation } from "./rotation.ts";
export {
  createServerCertManager,
  parsePair,
  requestServingCertificate,
  CURRENT_SERVER_CERT,
  type ServerCertManager,
  type ServingPair,
} from "./server-cert-manager.ts";
export { servingTemplate, hostnamesAndIPs, certSatisfiesTemplate, KUBELET_SERVING_SIGNER, SERVING_USAGES, type ServingTemplate } from "./serving-template.ts";
