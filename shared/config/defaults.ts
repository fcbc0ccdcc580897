import type { Config } from "./schema.ts";

/**
 * Every configuration key's default, as `ConfigSchema` (schema.ts) reads them for its `.default`
 * values. Apart from the schema so that code needing only the defaults does not load zod: a CLI
 * scan of a snapshot with the default configuration loads no library at all
 * (functions/cli/graph-input.ts).
 */
export const CONFIG_DEFAULTS = {
  labels: {
    ready: "agent:ready",
    hold: "agent:hold",
    processing: "agent:processing",
    needsHuman: "needs-human-confirm",
    epicManaged: "epic-managed",
    stuck: "agent:stuck",
  },
  queue: {
    mode: "events",
    approvalLabel: null,
    order: "number",
    replies: "answers",
    replyAuthors: "write",
  },
  kicks: { windowHours: 2 },
  locks: { processingTtlMinutes: 30 },
  claims: {
    ttlMinutes: 30,
    branchPattern: "issue/{number}-{slug}",
    maxAttempts: 3,
    maxPerAgent: null,
    maxActive: null,
    maxActiveByLabel: {},
  },
  idd: { staleHours: 24, mirrorClaims: true },
  priority: { labels: {}, project: null },
  /** Off unless `.github/switchyard.yml` has a `breaker` (its keys' defaults: BREAKER_DEFAULTS). */
  breaker: null,
  status: { public: false },
} as const;

/** The defaults of a `breaker` that is present (`breaker: {}`). */
export const BREAKER_DEFAULTS = {
  checks: null,
  repairLabel: "ci-repair",
  pendingMinutes: 120,
} as const;

/** The configuration of an empty `.github/switchyard.yml`: what `ConfigSchema` makes of `{}`. */
export const DEFAULT_CONFIG: Config = CONFIG_DEFAULTS;
