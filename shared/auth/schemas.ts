// Request and response schemas of the auth and key routes (spec 6.4); types come from here.
import { z } from "zod";

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
    expiresInDays: z
      .number()
      .int("expiresInDays must be a whole number")
      .min(1, "expiresInDays must be 1 to 3650")
      .max(3650, "expiresInDays must be 1 to 3650")
      .optional(),
  })
  .meta({ id: "CreateKeyRequest" });
export type CreateKeyRequest = z.infer<typeof CreateKeyRequestSchema>;

const Instant = z.string().meta({ format: "date-time", example: "2026-12-01T10:00:00Z" });

export const CreatedKeySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    key: z
      .string()
      .meta({ description: "The key itself: shown this once, stored only as a hash." }),
    createdAt: Instant,
    expiresAt: Instant.nullable(),
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
