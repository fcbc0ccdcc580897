// Runs in Node before the workerd tests: RSA key generation is slow inside workerd, so the
// App key pair is made here and handed over with `provide`.
import { generateKeyPairSync } from "node:crypto";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    appKeys: { pkcs8: string; spki: string };
  }
}

export default function setup(project: TestProject) {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  project.provide("appKeys", {
    pkcs8: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    spki: publicKey.export({ type: "spki", format: "pem" }).toString(),
  });
}
