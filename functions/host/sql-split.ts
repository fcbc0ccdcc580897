/**
 * Splits SQL text into statements at top-level semicolons (outside quotes, identifiers and
 * comments). Durable Objects' `sql.exec` accepts several statements in one string; the SQLite
 * drivers prepare one at a time. Trigger bodies (`BEGIN ... END`) are not handled: the Worker
 * defines none.
 */
export function splitStatements(sql: string): string[] {
  const out: string[] = [];
  let start = 0;
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const ch = sql[i];
    if (ch === "'" || ch === '"' || ch === "`") {
      const close = ch;
      i++;
      while (i < n) {
        if (sql[i] === close) {
          if (sql[i + 1] === close) i += 2;
          else break;
        } else i++;
      }
      i++;
    } else if (ch === "[") {
      const end = sql.indexOf("]", i + 1);
      i = end < 0 ? n : end + 1;
    } else if (ch === "-" && sql[i + 1] === "-") {
      const end = sql.indexOf("\n", i + 2);
      i = end < 0 ? n : end + 1;
    } else if (ch === "/" && sql[i + 1] === "*") {
      const end = sql.indexOf("*/", i + 2);
      i = end < 0 ? n : end + 2;
    } else if (ch === ";") {
      out.push(sql.slice(start, i));
      i++;
      start = i;
    } else i++;
  }
  out.push(sql.slice(start));
  return out.filter((s) => !isBlank(s));
}

/** Only whitespace and comments. */
function isBlank(sql: string): boolean {
  return (
    sql
      .replace(/--[^\n]*(\n|$)/g, "")
      .replace(/\/\*[\s\S]*?\*\//g, "")
      .trim() === ""
  );
}
