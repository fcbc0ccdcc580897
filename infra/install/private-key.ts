// GitHub hands out App keys as PKCS#1 PEM (`BEGIN RSA PRIVATE KEY`); the Worker's App auth needs
// PKCS#8 (`BEGIN PRIVATE KEY`): a PKCS#1 key works in Node-based tests and fails once deployed.
// node:crypto converts it, so setup needs no openssl. Node-only.
import { createPrivateKey, type KeyObject } from "node:crypto";

export class PrivateKeyError extends Error {
  override name = "PrivateKeyError";
}

/** The same RSA key as PKCS#8 PEM (a PKCS#8 key comes back re-encoded, unchanged in meaning). */
export function toPkcs8Pem(pem: string): string {
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: "pem" });
  } catch (error) {
    // Node's message names the format problem, never the key material.
    const reason = error instanceof Error ? error.message : String(error);
    throw new PrivateKeyError(
      `the App's private key is not a readable PEM private key (${reason})`,
    );
  }
  if (key.asymmetricKeyType !== "rsa") {
    throw new PrivateKeyError(
      `the App's private key is ${key.asymmetricKeyType ?? "not an asymmetric"} key; GitHub App keys are RSA`,
    );
  }
  return key.export({ type: "pkcs8", format: "pem" }).toString();
}
