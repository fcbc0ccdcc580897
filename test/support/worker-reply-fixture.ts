// The shape of a golden reply history (test/fixtures/replies/*.json): read by the unit tests
// from files (reply-fixtures.ts) and by the workerd tests through the bundler.
import type { SnapshotInput } from "../../shared/graph/snapshot.ts";

export interface ReplyFixture {
  name: string;
  description: string;
  /** The `.github/switchyard.yml` it runs under, as an object. */
  config: Record<string, unknown>;
  snapshot: SnapshotInput;
  expected: {
    replies: Array<{ number: number; reason: string; url: string; author: string; at: string }>;
  };
}
