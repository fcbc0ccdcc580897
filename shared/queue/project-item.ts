import { z } from "zod";
import type { WebhookPayload } from "../github/webhooks.ts";

/**
 * A `projects_v2_item` webhook, as switchyard keeps it (spec 6.1): GitHub sends it for
 * organization projects only and names no repository, so the InstallationObject filters it by
 * project and resolves the item's issue later, off the acknowledgement path; the issue's
 * RepoObject then applies the value (or re-reads it when the delivery did not carry it).
 */
export const ProjectItemNoticeSchema = z.object({
  projectId: z.string().min(1),
  itemId: z.string().min(1),
  /** The node id (resolved to a repository and number by the InstallationObject). */
  contentId: z.string().min(1),
  /** The field the change was about (`changes.field_value.field_name`), when the delivery says. */
  fieldName: z.string().nullable(),
  /**
   * `known`: the option now (null: none, or the item left the project); unknown: re-read it
   * (an item just added, or an edit GitHub delivered without `from`/`to`).
   */
  value: z.discriminatedUnion("known", [
    z.object({ known: z.literal(true), option: z.string().nullable() }),
    z.object({ known: z.literal(false) }),
  ]),
  /** Orders notices of one item: GitHub's `updated_at`, or the receipt for a removal. */
  atMs: z.number(),
});
export type ProjectItemNotice = z.infer<typeof ProjectItemNoticeSchema>;

/** The notice a handled `projects_v2_item` delivery makes, or why it changes nothing. */
export function projectItemNotice(
  action: string,
  payload: WebhookPayload<"projects_v2_item", "edited">,
  receivedMs: number,
): { kind: "notice"; notice: ProjectItemNotice } | { kind: "skip"; reason: string } {
  const item = payload.projects_v2_item;
  if (item.content_type !== "Issue" || item.content_node_id === null) {
    return { kind: "skip", reason: `a project item of type ${item.content_type}, not an issue` };
  }
  const updatedMs = Date.parse(item.updated_at);
  const base = {
    projectId: item.project_node_id,
    itemId: item.node_id,
    contentId: item.content_node_id,
  };
  if (action === "deleted") {
    // GitHub stamps a removal with the item's last change: the receipt orders it after that.
    return {
      kind: "notice",
      notice: {
        ...base,
        fieldName: null,
        value: { known: true, option: null },
        atMs: Math.max(updatedMs, receivedMs),
      },
    };
  }
  const change = action === "edited" ? payload.changes?.field_value : undefined;
  const carried = change !== undefined && Object.hasOwn(change, "to");
  return {
    kind: "notice",
    notice: {
      ...base,
      fieldName: change?.field_name ?? null,
      value: carried ? { known: true, option: change.to?.name ?? null } : { known: false },
      atMs: updatedMs,
    },
  };
}

/**
 * The time a read of project values stands for when merged with notices: just before the second
 * it began in. GitHub stamps changes in whole seconds, so a change made in that second, whose
 * notice may arrive later, wins over the read (a notice older than that loses).
 */
export function readStamp(startedMs: number): number {
  return Math.floor(startedMs / 1000) * 1000 - 1;
}
