// Request and response schemas of the auth and key routes (spec 6.4); types come from here.
import { z } from "zod";
import { DEFAULT_KEY_LIFETIME_DAYS, MAX_KEY_LIFETIME_DAYS } from "./keys.ts";

export const ApiErrorSchema = z
  .object({
    error: z.string().meta({ example: "forbidden" }),
    message: z.string(),
  })
  .meta({ description: "Every error: a stable code and what was wrong." });
export type ApiErrorBody = z.infer<typeof ApiErrorSchema>;

// Control characters would make a name unreadable in listings and logs.
// biome-ignore lint/suspicious/noControlCharactersInRegex: that is the point of the pattern
const PRINTABLE = /^[^\u0000-\u001f\u007f]*$/;

export const CreateKeyRequestSchema = z
  .strictObject({
    name: z
      .string()
      .min(1, "name must be 1 to 100 characters")
      .max(100, "name must be 1 to 100 characters")
      .regex(PRINTABLE, "name must not contain control characters")
      .refine((s) => s.trim() !== "", "name must not be blank"),
    // Every key expires: a leaked key stops working by itself (spec 6.4).
    expiresInDays: z
      .number()
      .int("expiresInDays must be a whole number")
      .min(1, `expiresInDays must be 1 to ${MAX_KEY_LIFETIME_DAYS}`)
      .max(MAX_KEY_LIFETIME_DAYS, `expiresInDays must be 1 to ${MAX_KEY_LIFETIME_DAYS}`)
      .default(DEFAULT_KEY_LIFETIME_DAYS)
      .meta({ description: `Days until the key expires (default ${DEFAULT_KEY_LIFETIME_DAYS}).` }),
  })
  .meta({ id: "CreateKeyRequest" });
/** What a caller sends (`expiresInDays` may be left out); the route reads the parsed output. */
export type CreateKeyRequest = z.input<typeof CreateKeyRequestSchema>;

const Instant = z.string().meta({ format: "date-time", example: "2026-12-01T10:00:00Z" });

export const CreatedKeySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    key: z
      .string()
      .meta({ description: "The key itself: shown this once, stored only as a hash." }),
    createdAt: Instant,
    expiresAt: Instant,
  })
  .meta({ id: "CreatedKey" });
export type CreatedKey = z.infer<typeof CreatedKeySchema>;

export const KeySummarySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    createdAt: Instant,
    lastUsedAt: Instant.nullable().meta({ description: "To the minute: uses are coalesced." }),
    expiresAt: Instant.nullable(),
    revokedAt: Instant.nullable(),
  })
  .meta({ id: "KeySummary" });
export type KeySummary = z.infer<typeof KeySummarySchema>;

export const KeyListSchema = z.object({ keys: z.array(KeySummarySchema) }).meta({ id: "KeyList" });
export type KeyList = z.infer<typeof KeyListSchema>;

/** Key ids are UUIDs; anything else cannot name a key. */
export const KeyIdSchema = z.string().min(1).max(64);
