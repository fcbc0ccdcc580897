/**
 * A tagged-template helper over Durable Object SQLite: values become bound parameters, never
 * string-spliced SQL. `sql<Row>\`SELECT * FROM issues WHERE number = ${n}\`` returns rows.
 */
export type Sql = <Row extends Record<string, SqlStorageValue> = Record<string, SqlStorageValue>>(
  strings: TemplateStringsArray,
  ...values: SqlStorageValue[]
) => Row[];

export function sqlTag(storage: SqlStorage): Sql {
  return (strings, ...values) => {
    let query = strings[0] ?? "";
    for (let i = 1; i < strings.length; i++) query += `?${strings[i]}`;
    // biome-ignore lint/suspicious/noExplicitAny: the row type is the caller's declaration
    return storage.exec<any>(query, ...values).toArray();
  };
}

/**
 * Version-gated schema migrations, run synchronously in the Durable Object constructor (SQL
 * calls are synchronous, so no request can observe a half-migrated schema). Each step runs
 * once, in order, inside a transaction with the version bump.
 */
export function migrate(
  storage: DurableObjectStorage,
  steps: ReadonlyArray<(sql: SqlStorage) => void>,
): number {
  storage.sql.exec(
    "CREATE TABLE IF NOT EXISTS _schema (id INTEGER PRIMARY KEY CHECK (id = 0), version INTEGER NOT NULL)",
  );
  const row = storage.sql
    .exec<{ version: number }>("SELECT version FROM _schema WHERE id = 0")
    .toArray()[0];
  let version = row?.version ?? 0;
  while (version < steps.length) {
    const step = steps[version]!;
    const next = version + 1;
    storage.transactionSync(() => {
      step(storage.sql);
      storage.sql.exec(
        "INSERT INTO _schema (id, version) VALUES (0, ?) ON CONFLICT (id) DO UPDATE SET version = excluded.version",
        next,
      );
    });
    version = next;
  }
  return version;
}
