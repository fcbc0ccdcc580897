// Every GraphQL document the client sends is valid against GitHub's public schema, and every
// type and field of the simulator's executable subset exists in that schema with the same
// signature, so the simulator cannot accept a query GitHub would reject.
import { readFileSync } from "node:fs";
import {
  buildASTSchema,
  buildSchema,
  extendSchema,
  type GraphQLNamedType,
  type GraphQLSchema,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  isUnionType,
  parse,
  validate,
} from "graphql";
import { describe, expect, it } from "vitest";
import { SIM_GRAPHQL_SDL } from "../../infra/github-sim/graphql.ts";
import { EXAMPLE_PROJECT_QUERY } from "../../infra/github-sim/projects-graphql.ts";
import { ALL_QUERIES } from "../../shared/github/queries.ts";

function githubSchema(): GraphQLSchema {
  const sdl = readFileSync(
    new URL("../../node_modules/@octokit/graphql-schema/schema.graphql", import.meta.url),
    "utf8",
  );
  // The published SDL repeats two Enterprise fields; skip SDL validation rather than edit it.
  const base = buildASTSchema(parse(sdl), { assumeValidSDL: true });
  const extension = readFileSync(
    new URL("./github-schema-extension.graphql", import.meta.url),
    "utf8",
  );
  return extendSchema(base, parse(extension));
}

const GITHUB = githubSchema();
const SIM = buildSchema(SIM_GRAPHQL_SDL);

describe("GraphQL documents the client sends", () => {
  it.each(Object.entries(ALL_QUERIES))("%s is valid against GitHub's schema", (_name, query) => {
    const errors = validate(GITHUB, parse(query)).map((e) => e.message);
    expect(errors).toEqual([]);
  });

  it.each(Object.entries(ALL_QUERIES))(
    "%s is valid against the simulator's subset",
    (_name, query) => {
      expect(validate(SIM, parse(query)).map((e) => e.message)).toEqual([]);
    },
  );

  it("the documented Projects (v2) query is valid against GitHub's schema and the simulator's", () => {
    const doc = parse(EXAMPLE_PROJECT_QUERY);
    expect(validate(GITHUB, doc).map((e) => e.message)).toEqual([]);
    expect(validate(SIM, doc).map((e) => e.message)).toEqual([]);
  });

  it("a query GitHub rejects is caught (the check can fail)", () => {
    const bad =
      'query { repository(owner: "a", name: "b") { issues(first: 1) { nodes { blockers } } } }';
    expect(validate(GITHUB, parse(bad)).length).toBeGreaterThan(0);
  });
});

function signatureProblems(sim: GraphQLNamedType, real: GraphQLNamedType | undefined): string[] {
  if (!real) return [`${sim.name} is not a GitHub type`];
  if (sim.constructor !== real.constructor)
    return [`${sim.name} is a different kind of type on GitHub`];
  const problems: string[] = [];
  if (isObjectType(sim) || isInterfaceType(sim)) {
    const realFields = (real as typeof sim).getFields();
    for (const field of Object.values(sim.getFields())) {
      const r = realFields[field.name];
      if (!r) {
        problems.push(`${sim.name}.${field.name} does not exist on GitHub`);
        continue;
      }
      if (String(r.type) !== String(field.type))
        problems.push(`${sim.name}.${field.name}: ${field.type} here, ${r.type} on GitHub`);
      for (const arg of field.args) {
        const ra = r.args.find((a) => a.name === arg.name);
        if (!ra) problems.push(`${sim.name}.${field.name}(${arg.name}) does not exist on GitHub`);
        else if (String(ra.type) !== String(arg.type))
          problems.push(
            `${sim.name}.${field.name}(${arg.name}): ${arg.type} here, ${ra.type} on GitHub`,
          );
      }
    }
    if (isObjectType(sim)) {
      const realInterfaces = (real as typeof sim).getInterfaces().map((i) => i.name);
      for (const i of sim.getInterfaces())
        if (!realInterfaces.includes(i.name))
          problems.push(`${sim.name} does not implement ${i.name} on GitHub`);
    }
  } else if (isEnumType(sim)) {
    const values = (real as typeof sim).getValues().map((v) => v.name);
    for (const v of sim.getValues())
      if (!values.includes(v.name)) problems.push(`${sim.name}.${v.name} is not a GitHub value`);
  } else if (isInputObjectType(sim)) {
    const realFields = (real as typeof sim).getFields();
    for (const f of Object.values(sim.getFields())) {
      const r = realFields[f.name];
      if (!r || String(r.type) !== String(f.type))
        problems.push(`input ${sim.name}.${f.name} differs on GitHub`);
    }
  } else if (isUnionType(sim)) {
    const members = (real as typeof sim).getTypes().map((t) => t.name);
    for (const t of sim.getTypes())
      if (!members.includes(t.name)) problems.push(`${t.name} is not in GitHub's ${sim.name}`);
  }
  return problems;
}

describe("the simulator's GraphQL schema", () => {
  it("is a subset of GitHub's, type by type and field by field", () => {
    const problems = Object.values(SIM.getTypeMap())
      .filter((t) => !t.name.startsWith("__"))
      .flatMap((t) => signatureProblems(t, GITHUB.getType(t.name) ?? undefined));
    expect(problems).toEqual([]);
  });

  it("the comparison catches a drifted field", () => {
    const drifted = buildSchema(
      SIM_GRAPHQL_SDL.replace(
        "  number: Int!\n  title: String!",
        "  number: String!\n  title: String!",
      ),
    );
    const problems = signatureProblems(drifted.getType("Issue")!, GITHUB.getType("Issue")!);
    expect(problems).toContain("Issue.number: String! here, Int! on GitHub");
  });
});
