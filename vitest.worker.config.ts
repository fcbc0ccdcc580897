import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { configDefaults, defineConfig } from "vitest/config";
import { SIM_CLIENT_SECRET } from "./infra/github-sim/oauth.ts";
import { APP_ID, SESSION_SECRET, WEBHOOK_SECRET } from "./test/worker/global-setup.ts";

/**
 * Tests that run inside workerd: the Worker, its Durable Objects on real SQLite storage, and
 * GitHub = the simulator over real HTTP (started in Node by the global setup, one per project).
 * Two projects: `worker` (every file but the large installation's) and `worker-large` (that
 * one), so the large installation has a simulator of its own.
 */
export const workerProject = (name: string, include: string[], exclude: string[] = []) =>
  defineConfig({
    plugins: [
      cloudflareTest(({ inject }) => ({
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          bindings: {
            GITHUB_WEBHOOK_SECRET: WEBHOOK_SECRET,
            GITHUB_API_URL: inject("simUrl"),
            GITHUB_APP_ID: String(APP_ID),
            GITHUB_APP_PRIVATE_KEY: inject("appPrivateKey"),
            PRODUCER_DEBOUNCE_MS: "0",
            FLEET_WRITE_DELAY_MS: "0",
            GITHUB_RETRY_BASE_MS: "5",
            GITHUB_TIMEOUT_MS: "1500",
            SCHEDULE_RETRY_BASE_MS: "20",
            // Small pages and steps, so repositories of a few dozen issues already reconcile
            // fully across several pages and alarm runs (production: 100 and 10).
            RECONCILE_PAGE_SIZE: "20",
            RECONCILE_PAGES_PER_RUN: "2",
            PUBLIC_URL: "https://switchyard.test",
            OIDC_ISSUER: `${inject("simUrl")}/oidc`,
            // The status page's GitHub login against the simulator's OAuth routes.
            GITHUB_APP_CLIENT_ID: `Iv1.sim${APP_ID}`,
            GITHUB_APP_CLIENT_SECRET: SIM_CLIENT_SECRET,
            SESSION_SECRET: SESSION_SECRET,
          },
        },
      })),
    ],
    test: {
      name,
      include,
      exclude: [...configDefaults.exclude, ...exclude],
      globalSetup: ["test/worker/global-setup.ts"],
      // One GitHub simulator serves every file: files run one after another, each resetting it.
      fileParallelism: false,
      // These tests drive whole flows (install, reconcile, webhooks, alarms) through workerd and
      // the simulator over real HTTP. The longest take 3-5 s on an idle 2-core machine, and more
      // than 5 s (vitest's default) while the other projects run beside them, as in CI.
      testTimeout: 20_000,
      hookTimeout: 20_000,
    },
  });

export default workerProject("worker", ["test/worker/**/*.test.ts"], ["test/worker/large/**"]);
