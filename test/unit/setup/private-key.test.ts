import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { PrivateKeyError, toPkcs8Pem } from "../../../infra/install/private-key.ts";

function pemDer(pem: string): Uint8Array<ArrayBuffer> {
  const body = pem.replace(/-----[A-Z ]+-----/g, "").replace(/\s+/g, "");
  return Uint8Array.from(Buffer.from(body, "base64"));
}

describe("App private keys", () => {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const pkcs1 = privateKey.export({ type: "pkcs1", format: "pem" }).toString();

  it("converts GitHub's PKCS#1 key to a PKCS#8 key WebCrypto imports and that signs as the original", async () => {
    expect(pkcs1).toContain("-----BEGIN RSA PRIVATE KEY-----");
    const pkcs8 = toPkcs8Pem(pkcs1);
    expect(pkcs8.startsWith("-----BEGIN PRIVATE KEY-----\n")).toBe(true);
    const algorithm = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };
    const key = await crypto.subtle.importKey("pkcs8", pemDer(pkcs8), algorithm, false, ["sign"]);
    const data = new TextEncoder().encode("switchyard");
    const signature = await crypto.subtle.sign(algorithm, key, data);
    const spki = publicKey.export({ type: "spki", format: "der" });
    const verifier = await crypto.subtle.importKey(
      "spki",
      Uint8Array.from(spki),
      algorithm,
      false,
      ["verify"],
    );
    expect(await crypto.subtle.verify(algorithm, verifier, signature, data)).toBe(true);
  });

  it("leaves a PKCS#8 key as it is", () => {
    const pkcs8 = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    expect(toPkcs8Pem(pkcs8)).toBe(pkcs8);
  });

  it("refuses what is not an RSA private key, without echoing it", () => {
    const junk = "-----BEGIN RSA PRIVATE KEY-----\nbm90IGEga2V5\n-----END RSA PRIVATE KEY-----\n";
    expect(() => toPkcs8Pem(junk)).toThrow(PrivateKeyError);
    expect(() => toPkcs8Pem(junk)).toThrow(/not a readable PEM private key/);
    try {
      toPkcs8Pem(junk);
    } catch (error) {
      expect(String(error)).not.toContain("bm90IGEga2V5");
    }
    const ec = generateKeyPairSync("ec", { namedCurve: "P-256" })
      .privateKey.export({ type: "pkcs8", format: "pem" })
      .toString();
    expect(() => toPkcs8Pem(ec)).toThrow(/ec key; GitHub App keys are RSA/);
  });
});
