import { describe, expect, it } from "vitest";
import { deployedUrl } from "../../../infra/install/wrangler.ts";

describe("the URL wrangler deploy prints", () => {
  it("is the indented https line under the deployment, without a trailing slash", () => {
    const output = `
 ⛅️ wrangler 4.164.0
Total Upload: 1873.90 KiB / gzip: 381.37 KiB
Your Worker has access to the following bindings:
Binding                                            Resource
env.GITHUB_API_URL ("https://api.github.com")      Environment Variable
Uploaded switchyard-staging (3.10 sec)
Deployed switchyard-staging triggers (1.02 sec)
  https://switchyard-staging.acme.workers.dev/
  schedule: */15 * * * *
Current Version ID: 0a1b2c3d
`;
    expect(deployedUrl(output)).toBe("https://switchyard-staging.acme.workers.dev");
  });

  it("is null when there is none", () => {
    expect(deployedUrl("Uploaded switchyard\n  switchyard.acme.com (custom domain)\n")).toBeNull();
  });
});
