// Public surface of registry credentials (upstream pkg/credentialprovider): pull secrets → keyring →
// CRI AuthConfig per image.
export { dockerConfigsFromSecrets, parseDockerCfg, parseDockerConfigJson, decodeAuthField, type DockerConfig, type DockerConfigEntry } from "./dockerconfig.ts";
export { createDockerKeyring, globMatch, isDefaultRegistryMatch, keyringKey, repositoryOf, urlsMatch, type AuthConfig, type DockerKeyring } from "./keyring.ts";
