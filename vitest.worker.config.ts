import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

/** Tests that run inside workerd: the Worker, its Durable Objects, real SQLite storage. */
export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        bindings: {
          GITHUB_WEBHOOK_SECRET: "test-webhook-secret",
          PRODUCER_DEBOUNCE_MS: "0",
        },
      },
    }),
  ],
  test: {
    name: "worker",
    include: ["test/worker/**/*.test.ts"],
  },
});
