// Compile-time check (tsconfig.worker.json, Cloudflare's types): the host boundary the portable
// host implements (functions/host/boundary.ts) is a subset of what Cloudflare provides, member
// for member, so code written against it runs on both. Nothing here runs.
import type {
  ExecutionContext as HostExecutionContext,
  ObjectId,
  ObjectNamespace,
  ObjectSql,
  ObjectState,
  ObjectStorage,
  ScheduledEvent,
  SqlCursor,
} from "../../functions/host/boundary.ts";

type Assignable<From, To> = [From] extends [To] ? true : false;
const check = <T extends true>(_: T) => _;

check<Assignable<DurableObjectId, ObjectId>>(true);
check<Assignable<SqlStorageCursor<Record<string, SqlStorageValue>>, SqlCursor>>(true);
check<Assignable<SqlStorage, ObjectSql>>(true);
check<Assignable<DurableObjectStorage, ObjectStorage>>(true);
check<Assignable<DurableObjectState, ObjectState>>(true);
check<Assignable<DurableObjectNamespace, Pick<ObjectNamespace, "idFromName" | "idFromString">>>(
  true,
);
check<Assignable<ScheduledController, ScheduledEvent>>(true);
check<Assignable<ExecutionContext, HostExecutionContext>>(true);
