/**
 * Namespaces and stubs on the portable host: `env.REPO.idFromName(name)` hashes the name into a
 * 64-hex-digit id (one SQLite file per id), `get(id)` returns a stub whose method calls go
 * through the object's executor (functions/host/executor.ts).
 */
import { createHash } from "node:crypto";
import type { ObjectId, ObjectNamespace, ObjectStub } from "./boundary.ts";
import type { ObjectExecutor } from "./executor.ts";

const HEX_ID = /^[0-9a-f]{64}$/;

class HostObjectId implements ObjectId {
  readonly hex: string;
  readonly name: string | undefined;
  constructor(hex: string, name?: string) {
    this.hex = hex;
    this.name = name;
  }
  toString(): string {
    return this.hex;
  }
  equals(other: ObjectId): boolean {
    return other.toString() === this.hex;
  }
}

/** The id of `name` in the namespace of `className`: stable across restarts and hosts. */
export function idFromName(className: string, name: string): ObjectId {
  const hex = createHash("sha256").update(`${className}\u0000${name}`).digest("hex");
  return new HostObjectId(hex, name);
}

export function idFromString(hex: string): ObjectId {
  if (!HEX_ID.test(hex)) throw new TypeError(`Invalid Durable Object ID: ${JSON.stringify(hex)}`);
  return new HostObjectId(hex);
}

/** A stub: any property is a method called across the boundary (`then` excepted: not a promise). */
export function stubFor<T>(id: ObjectId, executor: () => ObjectExecutor): ObjectStub<T> {
  const methods = new Map<string, (...args: unknown[]) => Promise<unknown>>();
  return new Proxy({} as ObjectStub<T>, {
    get(_target, property) {
      if (property === "id") return id;
      if (property === "name") return id.name;
      if (typeof property !== "string" || property === "then") return undefined;
      let method = methods.get(property);
      if (!method) {
        method = (...args: unknown[]) => executor().call(property, args);
        methods.set(property, method);
      }
      return method;
    },
  });
}

export class HostNamespace<T = object> implements ObjectNamespace<T> {
  readonly className: string;
  private readonly executorFor: (id: ObjectId) => ObjectExecutor;

  constructor(className: string, executorFor: (id: ObjectId) => ObjectExecutor) {
    this.className = className;
    this.executorFor = executorFor;
  }

  idFromName(name: string): ObjectId {
    return idFromName(this.className, name);
  }

  idFromString(hex: string): ObjectId {
    return idFromString(hex);
  }

  get(id: ObjectId): ObjectStub<T> {
    const hex = id.toString();
    if (!HEX_ID.test(hex)) throw new TypeError("get() needs an id from this namespace");
    return stubFor<T>(id, () => this.executorFor(id));
  }
}
