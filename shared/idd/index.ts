// The public surface of shared/idd: IDD marker protocol, claim resolution, branch names and
// sweep comment rules. Pure and Web-standard; runs on Workers, Node, Bun and Deno.
export * from "./body-markers.ts";
export * from "./branch-name.ts";
export * from "./claims.ts";
export * from "./classify.ts";
export * from "./comment-envelope.ts";
export * from "./comment-markers.ts";
export * from "./comments.ts";
export * from "./forced-handoff.ts";
export * from "./html-entities.ts";
export * from "./live-status.ts";
export * from "./markdown-code.ts";
export * from "./markers.ts";
export * from "./suggestion-list.ts";
export * from "./suitability-rejection.ts";
export * from "./sweep.ts";
export * from "./sweep-trace.ts";
export * from "./timestamp.ts";
export * from "./tokens.ts";
