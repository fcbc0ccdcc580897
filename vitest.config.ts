import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { workerProject } from "./vitest.worker.config.ts";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["test/unit/**/*.test.ts"],
          environment: "node",
        },
      },
      "./vitest.worker.config.ts",
      // The large installation (issue 25): its own simulator, beside the worker project's files.
      workerProject("worker-large", ["test/worker/large/**/*.test.ts"]),
      {
        test: {
          // The quick start itself: `npm start` (simulator + wrangler dev) end to end.
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          environment: "node",
        },
      },
      {
        test: {
          // The simulator and client checked against GitHub's published OpenAPI and GraphQL schemas,
          // and our own OpenAPI description against Redocly's lint.
          name: "contract",
          include: ["test/contract/**/*.test.ts"],
          environment: "node",
        },
      },
      {
        // shared/github and the GitHub simulator inside workerd (no Worker of our own needed).
        plugins: [cloudflareTest({ miniflare: { compatibilityDate: "2026-11-01" } })],
        test: {
          name: "workerd",
          include: ["test/workerd/**/*.test.ts"],
          globalSetup: ["test/workerd/global-setup.ts"],
        },
      },
    ],
  },
});
