import { describe, expect, it } from "vitest";
import { permissionGrantsWrite, trustedMarkerAuthors } from "../../../shared/idd/trust.ts";

const author = (login: string, association: string | null, type = "User", ownMarker = false) => ({
  login,
  type,
  association,
  ownMarker,
});

describe("trusted marker authors", () => {
  it("the configured list wins outright", () => {
    expect(
      trustedMarkerAuthors([author("owner", "OWNER")], {
        configured: ["fleet-bot"],
        known: () => undefined,
      }),
    ).toEqual({ trusted: ["fleet-bot"], unknown: [] });
  });

  it("write associations and switchyard's own markers are trusted; others by GitHub's answer; unknown ones count until asked", () => {
    const known = (login: string) =>
      ({ checked: true, denied: false })[login] as boolean | undefined;
    const result = trustedMarkerAuthors(
      [
        author("Owner", "OWNER"),
        author("member", "MEMBER"),
        author("collab", "COLLABORATOR"),
        author("checked", "CONTRIBUTOR"),
        author("denied", "NONE"),
        author("newcomer", "NONE"),
        author("switchyard[bot]", "NONE", "Bot", true),
        author("other-app[bot]", "NONE", "Bot", false),
      ],
      { configured: null, known },
    );
    expect(result).toEqual({
      trusted: ["checked", "collab", "member", "newcomer", "owner", "switchyard[bot]"],
      unknown: ["newcomer"],
    });
  });

  it("write, maintain and admin grant write; read, triage and none do not", () => {
    expect(["admin", "maintain", "write"].every(permissionGrantsWrite)).toBe(true);
    expect(["read", "triage", "none"].some(permissionGrantsWrite)).toBe(false);
  });
});
