import { z } from "zod";
import { isConsentText, isIddNote } from "./comment-envelope.ts";
import { isMarkerTimestamp } from "./timestamp.ts";
import { isBranchToken, isMarkerToken } from "./tokens.ts";

/** zod field types shared by every marker schema, so render and parse validate alike. */
export const markerToken = z
  .string()
  .refine(isMarkerToken, "must be one token without whitespace, `<!--` or `-->`");

/** A claim-id: a token other than `none`, which the grammar reserves for "supersedes nothing". */
export const claimIdToken = markerToken.refine((v) => v !== "none", "cannot be `none`");

export const branchToken = z
  .string()
  .refine(isBranchToken, "must be one token without whitespace, `>`, `<!--` or `-->`");

export const markerTimestamp = z
  .string()
  .refine(isMarkerTimestamp, "must be a second-precision UTC timestamp (YYYY-MM-DDTHH:MM:SSZ)");

export const iddNote = z
  .string()
  .refine(isIddNote, "must be one italic line (`_..._`) that mentions IDD")
  .nullable();

/** The consent text after a forced-handoff marker: trimmed, some of it outside HTML comments. */
export const consentNote = z
  .string()
  .refine(isConsentText, "must be trimmed text with something visible outside HTML comments");

/** A positive issue or pull-request number. */
export const positiveInt = z
  .number()
  .int()
  .positive()
  .max(2 ** 31 - 1);
