// The public surface of shared/idd: the IDD marker protocol, claim resolution, branch names and
// the sweep comment rules. Pure and Web-standard: runs on Workers, Node, Bun and Deno. Helpers
// not listed here (envelope grammar, code masking, entity decoding) stay internal.

export type {
  BlockedByMarker,
  BodyMarker,
  BodyMarkerDiagnostic,
  BodyMarkerKind,
  BodyMarkerOptions,
  BodyMarkerScan,
  EffortMarker,
  RequiresMarker,
  RoadmapIdMarker,
  SpinoffOfMarker,
  SuitabilityScoreMarker,
  SweepTraceMarker,
  TriageVerdictMarker,
} from "./body-markers.ts";
export {
  BodyMarkerSchema,
  EFFORTS,
  renderBodyMarker,
  scanBodyMarkers,
  TRIAGE_VERDICTS,
} from "./body-markers.ts";
export type { BranchPatternInput } from "./branch-name.ts";
export {
  branchName,
  branchPatternProblem,
  FALLBACK_SLUG,
  MAX_SLUG_LENGTH,
  renderBranchPattern,
  STOP_WORDS,
  slugify,
} from "./branch-name.ts";
export type {
  ActiveClaim,
  ClaimDiagnostic,
  ClaimEvidence,
  ClaimOptions,
  ClaimOptionsInput,
  ClaimResolution,
  ClaimState,
  ClaimWarning,
  CompetingClaim,
  EvidenceOutcome,
  FreshClaimVerdict,
  IgnoreReason,
  NonceEntry,
  Ownership,
  ReleasedClaim,
  WarningKind,
} from "./claims.ts";
export { ClaimOptionsSchema, liveHolder, resolveClaims } from "./claims.ts";
export type { CommentRole, ResponseVerdict, TextClassification } from "./classify.ts";
export {
  AGENT_MARKER_NAMES,
  classifyText,
  DEFERRAL_PATTERNS,
  TERMINAL_PATTERNS,
} from "./classify.ts";
export type { CommentMarkerToken } from "./comment-envelope.ts";
export { COMMENT_MARKER_TOKENS } from "./comment-envelope.ts";
export type {
  ActivationNonceMarker,
  ClaimedByMarker,
  CommentMarker,
  CommentMarkerRead,
  ForcedHandoffMarker,
  LegacyClaimedByMarker,
  LegacyUnclaimedByMarker,
  UnclaimedByMarker,
} from "./comment-markers.ts";
export {
  CommentMarkerSchema,
  parseCommentMarker,
  renderActivationNonce,
  renderClaimedBy,
  renderCommentMarker,
  renderForcedHandoff,
  renderLegacyClaimedBy,
  renderLegacyUnclaimedBy,
  renderUnclaimedBy,
} from "./comment-markers.ts";
export type { CommentAuthor, IssueComment, IssueCommentInput } from "./comments.ts";
export { CommentListInputSchema, IssueCommentSchema, parseCommentList } from "./comments.ts";
export type { ForcedHandoffPayload, HandoffPayloadRead } from "./forced-handoff.ts";
export {
  FORCED_HANDOFF_SCOPES,
  ForcedHandoffPayloadSchema,
  readForcedHandoffPayload,
} from "./forced-handoff.ts";
export type { LiveStatusMarker } from "./live-status.ts";
export { parseLiveStatus, renderLiveStatus } from "./live-status.ts";
export type {
  Marker,
  MarkerDiagnostic,
  MarkerKind,
  MarkerReading,
  ReadMarkersOptions,
} from "./markers.ts";
export { readMarkers, renderMarker } from "./markers.ts";
export {
  confirmsSuggestion,
  containsSuggestionList,
  suggestionListItems,
} from "./suggestion-list.ts";
export type { SuitabilityOutcome, SuitabilityRejectionMarker } from "./suitability-rejection.ts";
export {
  parseSuitabilityRejection,
  renderSuitabilityRejection,
  SUITABILITY_OUTCOMES,
  SUITABILITY_REJECTION_PREFIX,
} from "./suitability-rejection.ts";
export type {
  CommentVerdict,
  SuggestionListReport,
  SweepEvaluation,
  SweepIssue,
  SweepIssueInput,
  SweepReason,
} from "./sweep.ts";
export { evaluateSweep, SweepIssueSchema, TEST_SWEEP_LABELS } from "./sweep.ts";
export type { SweepTracePayload } from "./sweep-trace.ts";
export { SweepTracePayloadSchema, TERMINAL_TRACE_VALUES } from "./sweep-trace.ts";
export { formatSecond, isMarkerTimestamp, truncateToSecond } from "./timestamp.ts";
