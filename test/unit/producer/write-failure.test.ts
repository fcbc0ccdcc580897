import { describe, expect, it } from "vitest";
import { GitHubApiError, type GitHubErrorKind } from "../../../shared/github/errors.ts";
import { MAX_WRITE_ATTEMPTS, writeFailureVerdict } from "../../../shared/producer/write-failure.ts";

const failure = (kind: GitHubErrorKind, status: number | null) =>
  new GitHubApiError({
    kind,
    operation: "add agent:ready to acme/app#2",
    request: "POST /repos/acme/app/issues/2/labels",
    status,
    attempts: 1,
    reason: "no",
  });

describe("writeFailureVerdict", () => {
  it("retries a failure that can pass until the bound, then parks it", () => {
    const error = failure("server", 502);
    for (let attempts = 1; attempts < MAX_WRITE_ATTEMPTS; attempts++)
      expect(writeFailureVerdict(error, attempts)).toBe("retry");
    expect(writeFailureVerdict(error, MAX_WRITE_ATTEMPTS)).toBe("park");
    expect(writeFailureVerdict(new Error("lost"), MAX_WRITE_ATTEMPTS)).toBe("park");
    expect(writeFailureVerdict(failure("rate-limited", 403), 1)).toBe("retry");
  });

  it("parks a 403 at once and drops what GitHub will never accept", () => {
    expect(writeFailureVerdict(failure("forbidden", 403), 1)).toBe("park");
    expect(writeFailureVerdict(failure("not-found", 404), 1)).toBe("drop");
    expect(writeFailureVerdict(failure("invalid", 422), 1)).toBe("drop");
  });
});
