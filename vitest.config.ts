import { defineConfig } from "vitest/config";

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
      {
        test: {
          // The simulator and client checked against GitHub's published OpenAPI and GraphQL schemas.
          name: "contract",
          include: ["test/contract/**/*.test.ts"],
          environment: "node",
        },
      },
    ],
  },
});
