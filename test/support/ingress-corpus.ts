// The hostile webhook corpora (spec 6.1), shared by the Worker's ingress test (test/worker,
// inside workerd) and the host conformance suite (test/e2e, over HTTP against every host): the
// same cases must be refused the same way wherever the Worker runs. Web-standard APIs only.
import { signBody } from "../../shared/webhooks/signature.ts";

export function issuesOpened(repoId: number, name = `corpus/r${repoId}`, installationId = 555) {
  return {
    action: "opened",
    issue: {
      id: 9001,
      node_id: "I_9001",
      number: 1,
      title: "A new issue",
      state: "open",
      state_reason: null,
      body: null,
      labels: [{ id: 1, name: "bug" }],
      user: { login: "octocat", id: 1, type: "User" },
      created_at: "2026-11-29T10:00:00Z",
      updated_at: "2026-11-29T10:00:00Z",
      closed_at: null,
    },
    repository: {
      id: repoId,
      name: name.split("/")[1],
      full_name: name,
      owner: { login: "corpus", id: 5 },
    },
    sender: { login: "octocat", id: 1, type: "User" },
    installation: { id: installationId },
  };
}

export function webhookHeaders(
  event: string,
  signature: string | null,
  delivery = crypto.randomUUID(),
) {
  const h: Record<string, string> = {
    "x-github-event": event,
    "x-github-delivery": delivery,
    "content-type": "application/json",
  };
  if (signature !== null) h["x-hub-signature-256"] = signature;
  return h;
}

/** One case of the signature corpus: how to make its wrong signature (and body, when changed). */
export type SignatureCase = [
  name: string,
  make: () => Promise<{ signature: string | null; body?: string | Uint8Array<ArrayBuffer> }>,
];

/**
 * Signatures that must be refused (401) for `body` delivered to a Worker whose webhook secret is
 * `secret`: missing, malformed, of another body or secret, a body changed after signing.
 */
export function signatureCorpus(secret: string, body: string): SignatureCase[] {
  const digest = async (text: string, key = secret) =>
    (await signBody(key, text)).slice("sha256=".length);
  return [
    ["missing header", async () => ({ signature: null })],
    ["empty header", async () => ({ signature: "" })],
    ["prefix without digest", async () => ({ signature: "sha256=" })],
    ["sha1 prefix", async () => ({ signature: `sha1=${await digest(body)}` })],
    ["bare digest without prefix", async () => ({ signature: await digest(body) })],
    ["uppercase hex", async () => ({ signature: `sha256=${(await digest(body)).toUpperCase()}` })],
    ["non-hex characters", async () => ({ signature: `sha256=${"zz".repeat(32)}` })],
    ["63 hex digits", async () => ({ signature: `sha256=${(await digest(body)).slice(1)}` })],
    ["65 hex digits", async () => ({ signature: `sha256=${await digest(body)}0` })],
    [
      "128 hex digits",
      async () => ({ signature: `sha256=${await digest(body)}${await digest(body)}` }),
    ],
    ["signature of another body", async () => ({ signature: await signBody(secret, `${body} `) })],
    [
      "signature with another secret",
      async () => ({ signature: await signBody("not-the-secret", body) }),
    ],
    ["signature of an empty body", async () => ({ signature: await signBody(secret, " ") })],
    [
      "body changed after signing",
      async () => ({
        signature: await signBody(secret, body),
        body: body.replace("A new issue", "A new issuE"),
      }),
    ],
    ["space after the prefix", async () => ({ signature: `sha256= ${await digest(body)}` })],
    ["prefix without =", async () => ({ signature: `sha256${await digest(body)}` })],
    [
      "two signatures joined",
      async () => ({ signature: `sha256=${await digest(body)},sha256=${await digest(body)}` }),
    ],
    [
      "a tab inside the digest",
      async () => ({
        signature: `sha256=${(await digest(body)).slice(0, 32)}\t${(await digest(body)).slice(33)}`,
      }),
    ],
    ["a 10 KB header", async () => ({ signature: `sha256=${"a".repeat(10_000)}` })],
    ["an all-zero digest", async () => ({ signature: `sha256=${"0".repeat(64)}` })],
    ["digest of the secret itself", async () => ({ signature: await signBody(secret, secret) })],
  ];
}

/** A hostile payload: its event header, its body, and the statuses it may get (400 or 202). */
export type PayloadCase = [
  name: string,
  event: string,
  body: string | Uint8Array<ArrayBuffer>,
  statuses: number[],
];

/**
 * Correctly signed payloads that must change nothing: malformed ones (400, naming the event) and
 * ones the Worker does not act on (202). `valid` is a well-formed `issues.opened` to mutate.
 */
export function payloadCorpus(valid: () => ReturnType<typeof issuesOpened>): PayloadCase[] {
  const mutate = (f: (p: ReturnType<typeof valid>) => unknown) => {
    const p = valid();
    const out = f(p);
    return JSON.stringify(out === undefined ? p : out);
  };
  // 5000 levels of {"a": ...}, written as text: JSON.stringify of that object overflows Node's
  // stack (workerd's is larger), and the conformance suite builds this corpus under Node.
  const deep = `${'{"a":'.repeat(5000)}1${"}".repeat(5000)}`;

  return [
    ["not JSON", "issues", "hello", [400]],
    ["empty body", "issues", "", [400]],
    ["a JSON array", "issues", "[]", [400]],
    ["JSON null", "issues", "null", [400]],
    ["a JSON string", "issues", '"opened"', [400]],
    ["an empty object", "issues", "{}", [400]],
    [
      "missing repository",
      "issues",
      mutate((p) => {
        delete (p as Record<string, unknown>).repository;
      }),
      [400],
    ],
    [
      "repository.id as a string",
      "issues",
      mutate((p) => {
        (p.repository as Record<string, unknown>).id = "42";
      }),
      [400],
    ],
    [
      "repository.full_name without owner",
      "issues",
      mutate((p) => {
        p.repository.full_name = "justname";
      }),
      [400],
    ],
    [
      "negative issue number",
      "issues",
      mutate((p) => {
        p.issue.number = -1;
      }),
      [400],
    ],
    [
      "fractional issue number",
      "issues",
      mutate((p) => {
        p.issue.number = 1.5;
      }),
      [400],
    ],
    [
      "unknown issue state",
      "issues",
      mutate((p) => {
        p.issue.state = "merged";
      }),
      [400],
    ],
    [
      "labels not an array",
      "issues",
      mutate((p) => {
        (p.issue as Record<string, unknown>).labels = "bug";
      }),
      [400],
    ],
    [
      "label without a name",
      "issues",
      mutate((p) => {
        (p.issue as Record<string, unknown>).labels = [{ id: 3 }];
      }),
      [400],
    ],
    [
      "timestamp as a number",
      "issues",
      mutate((p) => {
        (p.issue as Record<string, unknown>).created_at = 1700000000;
      }),
      [400],
    ],
    [
      "timestamp that is not ISO",
      "issues",
      mutate((p) => {
        p.issue.updated_at = "yesterday";
      }),
      [400],
    ],
    [
      "action as a number",
      "issues",
      mutate((p) => {
        (p as Record<string, unknown>).action = 5;
      }),
      [400],
    ],
    [
      "unknown action",
      "issues",
      mutate((p) => {
        p.action = "pinned";
      }),
      [202],
    ],
    ["unhandled event", "star", mutate(() => ({ action: "created" })), [202]],
    ["ping", "ping", JSON.stringify({ zen: "Keep it logically awesome.", hook_id: 1 }), [202]],
    [
      "sub_issues without sub_issue",
      "sub_issues",
      mutate((p) => ({
        ...p,
        action: "sub_issue_added",
        parent_issue: p.issue,
        parent_issue_id: 1,
        sub_issue_id: 2,
      })),
      [400],
    ],
    [
      "issue_dependencies with a null blocker",
      "issue_dependencies",
      mutate((p) => ({
        ...p,
        action: "blocked_by_added",
        blocked_issue: p.issue,
        blocked_issue_id: 1,
        blocking_issue: null,
        blocking_issue_id: 2,
      })),
      [400],
    ],
    [
      "installation without id",
      "installation",
      JSON.stringify({
        action: "created",
        installation: { account: null, repository_selection: "all" },
        sender: { login: "o", id: 1 },
      }),
      [400],
    ],
    [
      "installation_repositories with a non-array",
      "installation_repositories",
      JSON.stringify({
        action: "added",
        installation: { id: 1, account: null, repository_selection: "selected" },
        repository_selection: "selected",
        repositories_added: "all",
        repositories_removed: [],
        sender: { login: "o", id: 1 },
      }),
      [400],
    ],
    [
      "label.edited without label",
      "label",
      mutate((p) => ({
        action: "edited",
        repository: p.repository,
        sender: p.sender,
        installation: p.installation,
      })),
      [400],
    ],
    [
      "issue_comment without body",
      "issue_comment",
      mutate((p) => ({
        ...p,
        action: "created",
        comment: {
          id: 1,
          node_id: "C",
          user: null,
          created_at: "2026-11-29T10:00:00Z",
          updated_at: "2026-11-29T10:00:00Z",
        },
      })),
      [400],
    ],
    [
      "a huge array where objects belong",
      "issues",
      mutate((p) => {
        (p.issue as Record<string, unknown>).labels = Array.from({ length: 50_000 }, (_, i) => i);
      }),
      [400],
    ],
    [
      "deeply nested JSON",
      "issues",
      mutate((p) => {
        (p as Record<string, unknown>).issue = "DEEPLY-NESTED";
      }).replace('"DEEPLY-NESTED"', deep),
      [400],
    ],
    [
      "bytes that are not UTF-8",
      "issues",
      new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
      [400],
    ],
    ["__proto__ keys", "issues", `{"__proto__":{"polluted":true},"action":"opened"}`, [400]],
    [
      "push to another branch",
      "push",
      mutate((p) => ({
        ref: "refs/heads/feature",
        after: "abc",
        repository: { ...p.repository, default_branch: "main" },
        commits: [{ id: "abc", modified: [".github/switchyard.yml"] }],
        installation: p.installation,
      })),
      [202],
    ],
    [
      "push not touching the config",
      "push",
      mutate((p) => ({
        ref: "refs/heads/main",
        after: "abc",
        repository: { ...p.repository, default_branch: "main" },
        commits: [{ id: "abc", modified: ["README.md"] }],
        installation: p.installation,
      })),
      [202],
    ],
    [
      "comment on a pull request",
      "issue_comment",
      mutate((p) => ({
        ...p,
        action: "created",
        issue: { ...p.issue, pull_request: { url: "x" } },
        comment: {
          id: 1,
          node_id: "C",
          body: "hi",
          user: null,
          created_at: "2026-11-29T10:00:00Z",
          updated_at: "2026-11-29T10:00:00Z",
        },
      })),
      [202],
    ],
    [
      "a repository event without installation",
      "issues",
      mutate((p) => {
        delete (p as Record<string, unknown>).installation;
      }),
      [202],
    ],
  ];
}
