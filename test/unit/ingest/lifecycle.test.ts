import { describe, expect, it } from "vitest";
import { lifecycleOutcome } from "../../../shared/ingest/lifecycle.ts";

const a = { id: 1, fullName: "acme/a" };
const b = { id: 2, fullName: "acme/b" };

describe("installation lifecycle", () => {
  it("created activates the listed repositories", () => {
    expect(lifecycleOutcome(null, { kind: "created", account: "acme", repos: [a, b] }, [])).toEqual(
      {
        status: "active",
        repos: [
          { ...a, status: "active" },
          { ...b, status: "active" },
        ],
      },
    );
  });

  it("deleted removes every installed repository", () => {
    expect(
      lifecycleOutcome("active", { kind: "deleted" }, [a, b]).repos.map((r) => r.status),
    ).toEqual(["removed", "removed"]);
  });

  it("suspend pauses and unsuspend resumes every repository", () => {
    expect(lifecycleOutcome("active", { kind: "suspended" }, [a])).toEqual({
      status: "suspended",
      repos: [{ ...a, status: "suspended" }],
    });
    expect(lifecycleOutcome("suspended", { kind: "unsuspended" }, [a])).toEqual({
      status: "active",
      repos: [{ ...a, status: "active" }],
    });
  });

  it("repositories added to a suspended installation stay paused; removed ones are removed", () => {
    expect(lifecycleOutcome("suspended", { kind: "repos-added", repos: [b] }, [a])).toEqual({
      status: "suspended",
      repos: [{ ...b, status: "suspended" }],
    });
    expect(lifecycleOutcome("active", { kind: "repos-removed", repos: [a] }, [a, b])).toEqual({
      status: "active",
      repos: [{ ...a, status: "removed" }],
    });
  });
});
