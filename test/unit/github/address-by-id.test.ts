// A RepoObject's client addresses its repository by id (issue 9 fix 1): requests naming it go to
// `/repositories/{id}`, anything else is left alone.
import { describe, expect, it } from "vitest";
import { addressById, ForeignRepositoryWriteError } from "../../../shared/github/client.ts";
import { RepositoryMismatchError } from "../../../shared/github/errors.ts";

const pinned = { id: 1001, fullName: "Acme/App" };

describe("addressById", () => {
  it("sends a route naming the pinned repository (any case) by id", () => {
    expect(
      addressById(
        "POST /repos/{owner}/{repo}/issues/{issue_number}/labels",
        { owner: "acme", repo: "app", issue_number: 5, labels: ["x"] },
        pinned,
      ),
    ).toEqual({
      route: "POST /repositories/{repository_id}/issues/{issue_number}/labels",
      params: { repository_id: 1001, issue_number: 5, labels: ["x"] },
    });
    expect(
      addressById("GET /repos/{owner}/{repo}", { owner: "ACME", repo: "APP" }, pinned),
    ).toEqual({ route: "GET /repositories/{repository_id}", params: { repository_id: 1001 } });
  });

  it("leaves other repositories, other routes and unpinned clients alone", () => {
    const other = { owner: "acme", repo: "lib", issue_number: 1 };
    const route = "GET /repos/{owner}/{repo}/issues/{issue_number}";
    expect(addressById(route, other, pinned)).toEqual({ route, params: other });
    expect(
      addressById("GET /app/installations/{installation_id}", { installation_id: 3 }, pinned),
    ).toEqual({
      route: "GET /app/installations/{installation_id}",
      params: { installation_id: 3 },
    });
    const own = { owner: "acme", repo: "app", issue_number: 1 };
    expect(addressById(route, own, undefined)).toEqual({ route, params: own });
    // `/repos/{owner}/{repository}`-like lookalikes are not rewritten.
    expect(
      addressById("GET /repositories/{repository_id}", { repository_id: 7 }, pinned).route,
    ).toBe("GET /repositories/{repository_id}");
  });

  it("refuses a write naming another repository (its former name, say) unless it is meant to", () => {
    const former = { owner: "acme", repo: "app-old", issue_number: 5, body: "x" };
    for (const route of [
      "POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
      "PATCH /repos/{owner}/{repo}/issues/{issue_number}",
      "DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}",
      "PUT /repos/{owner}/{repo}/issues/{issue_number}/labels",
    ]) {
      expect(() => addressById(route, former, pinned)).toThrow(ForeignRepositoryWriteError);
      expect(() => addressById(route, former, pinned)).toThrow(RepositoryMismatchError);
      // Explicitly cross-repository, or not pinned: sent by name as written.
      expect(addressById(route, former, pinned, { crossRepository: true })).toEqual({
        route,
        params: former,
      });
      expect(addressById(route, former, undefined)).toEqual({ route, params: former });
    }
    // Reads of other repositories (cross-repository blockers) stay allowed.
    const read = "GET /repos/{owner}/{repo}/issues/{issue_number}";
    expect(addressById(read, former, pinned)).toEqual({ route: read, params: former });
  });
});
