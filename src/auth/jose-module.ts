/**
 * The parts of jose the gateway uses, loaded with the first token it verifies or signs: on Workers
 * they are then an extra module, so a deployment without tokens never loads them and the main
 * module keeps room under its budget (docs/deploy.md). Named here, never `import("jose")` whole,
 * so that the bundle carries only these and what they need.
 */
export {
  CompactSign,
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  decodeProtectedHeader,
  errors,
  importJWK,
  jwtVerify,
  SignJWT,
} from "jose";
