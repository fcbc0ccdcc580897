// The status pages as HTML (hono/html tagged templates: escaped by default, no JSX, no build
// step, no client script). A few KB of inline CSS; readable from 390 px wide up.
import { html, raw } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import { formatDuration } from "./figures.ts";
import type { OrgPageModel } from "./org-view.ts";
import { KIND_STYLES, renderLegend } from "./svg.ts";
import type { Link, RepoPageModel } from "./view.ts";

type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

const CSS = `
:root{color-scheme:light;--fg:#0f172a;--muted:#64748b;--line:#e2e8f0;--bg:#f8fafc;--card:#fff;--accent:#1d4ed8}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header{background:#0f172a;color:#f8fafc;padding:10px 16px;display:flex;gap:12px;align-items:center;flex-wrap:wrap}
header a{color:#f8fafc;text-decoration:none}
header .brand{font-weight:700;letter-spacing:.02em}
header .who{margin-left:auto;font-size:14px;color:#cbd5e1}
header .who a{color:#93c5fd;margin-left:8px}
main{max-width:1180px;margin:0 auto;padding:16px}
h1{font-size:22px;margin:4px 0 2px;word-break:break-word}
h2{font-size:17px;margin:0 0 8px}
a{color:var(--accent)}
.sub{color:var(--muted);font-size:13px;margin:0 0 14px}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:14px;margin:0 0 14px}
.figures{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:10px;margin:0 0 14px}
.figure{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:10px 12px}
.figure b{display:block;font-size:24px;line-height:1.2}
.figure span{color:var(--muted);font-size:13px}
.graph-wrap{overflow-x:auto;-webkit-overflow-scrolling:touch;border:1px solid var(--line);border-radius:8px;background:#fff}
.graph-wrap svg{display:block;height:auto}
.graph-wrap a.node:hover polygon,.graph-wrap a.node:hover rect{stroke-width:3}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(340px,1fr));gap:14px}
.grid .card{margin:0}
.grid>*,.card{min-width:0}
td code{word-break:break-all;font-size:12px}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:14px}
th,td{text-align:left;padding:5px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{color:var(--muted);font-weight:600;font-size:12px;text-transform:uppercase;letter-spacing:.04em}
.empty{color:var(--muted);font-size:14px;margin:0}
pre{background:#f1f5f9;border-radius:6px;padding:8px;overflow:auto;font-size:12px;max-height:260px;margin:0}
.error{background:#fee2e2;border:1px solid #fca5a5;color:#7f1d1d;border-radius:8px;padding:8px 10px;margin:0 0 8px}
.pill{display:inline-block;border-radius:999px;padding:0 8px;font-size:12px;border:1px solid var(--line);color:var(--muted)}
.legend{list-style:none;display:flex;flex-wrap:wrap;gap:4px 14px;padding:0;margin:10px 0 0;font-size:13px}
.legend li{display:flex;align-items:center;gap:5px}
.legend svg{width:40px;height:auto}
.keys{font-size:13px;color:var(--muted);margin:8px 0 0}
.keys ul{list-style:none;padding:0;margin:6px 0 0;display:grid;grid-template-columns:repeat(auto-fit,minmax(260px,1fr));gap:4px 14px}
.keys i{font-style:normal;display:inline-block;width:12px;height:12px;border-radius:3px;vertical-align:-1px;margin-right:4px;border:2px solid}
.button{display:inline-block;background:#0f172a;color:#fff;text-decoration:none;border-radius:8px;padding:10px 16px;font-weight:600}
details summary{cursor:pointer;color:var(--muted);font-size:14px}
ul.repos{list-style:none;padding:0;margin:0}
ul.repos li{padding:6px 0;border-bottom:1px solid var(--line)}
@media (max-width:520px){main{padding:10px}.grid{grid-template-columns:1fr}h1{font-size:19px}.figure b{font-size:20px}.card{padding:12px}
#audit thead{display:none}#audit tr,#audit td{display:block;border:0;padding:1px 0}#audit tr{border-bottom:1px solid var(--line);padding:6px 0}#audit td:first-child{color:var(--muted);font-size:12px}}
`;

export function layout(title: string, viewer: string | null, body: Html): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>${title}</title>
<style>${raw(CSS)}</style>
</head>
<body>
<header><a class="brand" href="/">switchyard</a><span class="who">${
    viewer === null
      ? html`<a href="/login">Sign in with GitHub</a>`
      : html`signed in as <b>${viewer}</b><a href="/logout">sign out</a>`
  }</span></header>
<main>${body}</main>
</body>
</html>`;
}

const issue = (l: Link) => html`<a href="${l.url}">${l.label}</a>`;
const links = (list: Link[]) => list.map((l, i) => html`${i > 0 ? ", " : ""}${issue(l)}`);
const none = (text: string) => html`<p class="empty">${text}</p>`;

function section(title: string, id: string, body: Html): Html {
  return html`<section class="card" id="${id}"><h2>${title}</h2>${body}</section>`;
}

export function repoPage(m: RepoPageModel): Html {
  const f = m.figures;
  const figures = html`<div class="figures" id="figures">
<div class="figure"><b>${f.queueLength}</b><span>in the queue</span></div>
<div class="figure"><b>${f.liveClaims}</b><span>claims live</span></div>
<div class="figure"><b>${f.doneDailyMean}</b><span>done per day (7 days)</span></div>
<div class="figure"><b>${f.medianClaimMs === null ? "–" : formatDuration(f.medianClaimMs)}</b><span>median claim duration</span></div>
</div>`;
  const keys = html`<details class="keys"><summary>What the shapes mean</summary><ul>${Object.values(
    KIND_STYLES,
  ).map(
    (s) =>
      html`<li><i style="background:${s.fill};border-color:${s.stroke}"></i><b>${s.label}</b>: ${s.meaning}</li>`,
  )}<li>Solid arrows: a blocker to what it blocks. Dashed lines: a parent to its sub-issues.</li></ul></details>`;
  const picture = section(
    "Issue graph",
    "graph",
    html`<p class="sub">Blockers left of what they block, parents above their sub-issues. ${m.drawn} issues drawn${
      m.leftOut > 0
        ? html`; <b class="left-out">${m.leftOut} more not drawn</b> (the open issues nearest the queue come first)`
        : ""
    }. Each node links to its issue.</p>
<div class="graph-wrap">${raw(m.svg)}</div>${raw(renderLegend())}${keys}`,
  );
  const queue = section(
    `Queue (${m.queueTotal})`,
    "queue",
    m.queue.length === 0
      ? none("Nothing is claimable right now.")
      : html`<div class="scroll"><table><thead><tr><th>Issue</th><th>Priority</th><th>Why it is ready</th><th>Attempts</th></tr></thead><tbody>${m.queue.map(
          (q) =>
            html`<tr class="item" data-number="${q.issue.label.slice(1)}"><td>${issue(q.issue)} ${q.title}${q.paused ? html` <span class="pill">paused</span>` : ""}</td><td class="priority">${q.priority ?? "–"}</td><td>${q.reason}</td><td>${q.attempts}</td></tr>`,
        )}</tbody></table></div>`,
  );
  const pause =
    m.pause === null
      ? ""
      : html`<p class="error" id="paused"><b>Dispatch paused</b> since ${m.pause.since}: the default branch is red at ${issue(m.pause.commit)} (failing: ${links(m.pause.failing)}). Only repair issues are handed out.</p>`;
  const policy = section(
    "Queue policy",
    "policy",
    html`${
      m.breaker === null
        ? none("Circuit breaker: off (no breaker in .github/switchyard.yml).")
        : m.breaker.reason !== null
          ? html`<p class="error">Circuit breaker off: ${m.breaker.reason}</p>`
          : html`<p class="empty">Circuit breaker: <b>${m.breaker.state}</b>${m.breaker.head ? html` at ${m.breaker.head.slice(0, 7)}` : ""}${m.breaker.pending.length > 0 ? html` (running: ${m.breaker.pending.join(", ")})` : ""}.</p>`
    }${
      m.priority.labels === ""
        ? none("Priority labels: none.")
        : html`<p class="empty">Priority labels: ${m.priority.labels}.</p>`
    }${
      m.priority.project === null
        ? ""
        : m.priority.project.reason !== null
          ? html`<p class="error">Priority from ${m.priority.project.what}: off: ${m.priority.project.reason}</p>`
          : html`<p class="empty">Priority from ${m.priority.project.what}: ${m.priority.project.state} (${m.priority.project.ranked} issues ranked).</p>`
    }`,
  );
  const claims = section(
    `Live claims (${m.claims.length})`,
    "claims",
    m.claims.length === 0
      ? none("No agent holds a claim.")
      : html`<div class="scroll"><table><thead><tr><th>Issue</th><th>Agent</th><th>Fence</th><th>Expires</th></tr></thead><tbody>${m.claims.map(
          (c) =>
            html`<tr class="claim" data-number="${c.issue.label.slice(1)}"><td>${issue(c.issue)}</td><td>${c.agentId}${c.machine ? html` <span class="pill">${c.machine}</span>` : ""}${c.source === "idd" ? html` <span class="pill">IDD marker</span>` : ""}</td><td>${c.fence ?? "–"}</td><td>${c.expiresAt}</td></tr>`,
        )}</tbody></table></div>`,
  );
  // Writes of a claim that may still reach GitHub: their issues wait (shown only when any).
  const writes =
    m.writes.length === 0
      ? ""
      : section(
          `Writes in flight (${m.writes.length})`,
          "writes",
          html`<p class="empty">Each issue below is granted to nobody until its write record closes.</p><div class="scroll"><table><thead><tr><th>Issue</th><th>Agent</th><th>Fence</th><th>Write</th><th>State</th><th>Closes</th></tr></thead><tbody>${m.writes.map(
            (w) =>
              html`<tr class="write" data-number="${w.issue.label.slice(1)}"><td>${issue(w.issue)}</td><td>${w.agentId ?? "–"}</td><td>${w.fence}</td><td>${w.kind}</td><td>${w.state}</td><td>${w.closesAt}</td></tr>`,
          )}</tbody></table></div>`,
        );
  const blocked = section(
    `Blocked (${m.blocked.length})`,
    "blocked",
    m.blocked.length === 0
      ? none("Nothing open waits for a blocker.")
      : html`<div class="scroll"><table><thead><tr><th>Issue</th><th>Blocked by</th></tr></thead><tbody>${m.blocked.map(
          (b) => html`<tr><td>${issue(b.issue)} ${b.title}</td><td>${links(b.blockers)}</td></tr>`,
        )}</tbody></table></div>`,
  );
  const replies = section(
    `Waiting for an agent's answer (${m.repliesTotal})`,
    "replies",
    m.replies.length === 0
      ? none("No trusted person waits for an agent's answer.")
      : html`<div class="scroll"><table><thead><tr><th>Issue</th><th>Who wrote, when</th><th>Why it counts</th><th>Claim</th></tr></thead><tbody>${m.replies.map(
          (r) =>
            html`<tr class="reply" data-number="${r.issue.label.slice(1)}"><td>${issue(r.issue)} ${r.title}</td><td>${r.author}, ${issue({ label: r.at, url: r.url })}</td><td>${r.why}</td><td>${r.claim ?? "–"}</td></tr>`,
        )}</tbody></table>${
          m.repliesTotal > m.replies.length
            ? html`<p class="empty">${m.repliesTotal - m.replies.length} more (the graph API's <code>replies</code> list has them all).</p>`
            : ""
        }</div>`,
  );
  const rollups = section(
    "Rollup candidates",
    "rollups",
    m.rollupCandidates.length === 0
      ? none("No open parent has all its sub-issues closed.")
      : html`<ul>${m.rollupCandidates.map(
          (r) => html`<li>${issue(r.issue)} ${r.title} (sub-issues ${links(r.children)})</li>`,
        )}</ul>`,
  );
  const dead = section(
    `Dead letters (${m.deadLetters.length})`,
    "dead-letters",
    m.deadLetters.length === 0
      ? none("No issue is stuck.")
      : html`<ul>${m.deadLetters.map(
          (d) =>
            html`<li>${issue(d.issue)} ${d.title}${d.stuckAt ? html` (stuck since ${d.stuckAt})` : ""}: ${d.attempts.map(
              (a, i) =>
                html`${i > 0 ? "; " : ""}${a.agentId} ${a.outcome}${a.note ? html` “${a.note}”` : ""}`,
            )}</li>`,
        )}</ul>`,
  );
  const cycles = section(
    "Cycles and unresolved blockers",
    "cycles",
    m.cycles.length === 0 && m.unresolved.length === 0
      ? none("None.")
      : html`<ul>${m.cycles.map((c) => html`<li>cycle: ${links(c)}</li>`)}${m.unresolved.map(
          (u) => html`<li>${issue(u.issue)} names ${u.ref}, which switchyard cannot read</li>`,
        )}</ul>`,
  );
  const config = section(
    "Config",
    "config",
    html`${
      m.configError
        ? html`<p class="error"><b>.github/switchyard.yml is invalid</b> (the last good config applies): ${m.configError}</p>`
        : none(
            `.github/switchyard.yml is valid or absent${m.configCheckedAt ? ` (read ${m.configCheckedAt})` : ""}.`,
          )
    }<details><summary>Effective config</summary><pre>${m.config}</pre></details>`,
  );
  const sync = section(
    "Sync",
    "sync",
    html`<p class="empty">Writes: ${m.repository.writes}${m.repository.archived ? " (archived)" : ""}. Parked writes: ${m.parkedWrites}.</p>
${m.firstReconcile === null ? "" : html`<p class="first-reconcile"><b>${m.firstReconcile}</b></p>`}${m.installation === null ? "" : html`<p class="empty installation-progress">Installation: ${m.installation}</p>`}
${m.reconcile === null ? html`<p class="empty">No full reconcile is under way.</p>` : html`<details open><summary>Full reconcile under way</summary><pre>${m.reconcile}</pre></details>`}
<details${m.reconcile === null ? raw(" open") : ""}><summary>Watermarks</summary><pre>${m.watermarks}</pre></details>`,
  );
  const audit = section(
    "Latest audit entries",
    "audit",
    m.audit.length === 0
      ? none("Nothing recorded yet.")
      : html`<div class="scroll"><table><thead><tr><th>At</th><th>What</th><th>Detail</th></tr></thead><tbody>${m.audit.map(
          (a) =>
            html`<tr><td>${a.at}</td><td>${a.kind}</td><td><code>${a.detail.length > 240 ? `${a.detail.slice(0, 239)}…` : a.detail}</code></td></tr>`,
        )}</tbody></table></div>`,
  );
  return layout(
    `${m.repo} · switchyard`,
    m.viewer,
    html`<h1><a href="${m.repoUrl}">${m.repo}</a></h1>
<p class="sub">As of ${m.now}${m.repository.private === false ? " · public" : m.repository.private ? " · private" : ""}</p>
${pause}${figures}${picture}
<div class="grid">${queue}${replies}${claims}${writes}${policy}${blocked}${dead}${rollups}${cycles}${config}${sync}</div>
<div style="height:14px"></div>${audit}`,
  );
}

export interface InstallationListing {
  id: number;
  account: string;
  repositories: Array<{ fullName: string; private: boolean }>;
  /** More repositories than listed (GitHub pages them). */
  more: boolean;
  /** The installation's pacing of full reconciles, in a sentence (null: not known). */
  progress?: string | null;
}

export function homePage(viewer: string, installations: InstallationListing[]): Html {
  return layout(
    "switchyard",
    viewer,
    html`<h1>Your installations</h1>
<p class="sub">The repositories switchyard serves that you can see on GitHub.</p>
${
  installations.length === 0
    ? none("switchyard is not installed on any account you can see.")
    : installations.map(
        (i) =>
          html`<section class="card installation" data-id="${i.id}"><h2><a class="org" href="/orgs/${i.account}">${i.account}</a> <span class="pill">installation ${i.id}</span></h2>${i.progress ? html`<p class="empty installation-progress">${i.progress}</p>` : ""}${
            i.repositories.length === 0
              ? none("No repositories you can see.")
              : html`<ul class="repos">${i.repositories.map(
                  (r) =>
                    html`<li><a href="/repos/${r.fullName}">${r.fullName}</a> ${r.private ? html`<span class="pill">private</span>` : ""}</li>`,
                )}</ul>`
          }${i.more ? html`<p class="empty">More repositories are not listed.</p>` : ""}</section>`,
      )
}`,
  );
}

const figure = (n: number | null) => (n === null ? "–" : String(n));

/** `/orgs/{owner}`: the owner's repositories the viewer may see, and the owner's next items. */
export function orgPage(m: OrgPageModel): Html {
  const repos = section(
    `Repositories (${m.repos.length})`,
    "repos",
    m.repos.length === 0
      ? none("No repositories of this account that you can see.")
      : html`<div class="scroll"><table><thead><tr><th>Repository</th><th>Queue</th><th>Claims live</th><th>Stuck</th></tr></thead><tbody>${m.repos.map(
          (r) =>
            html`<tr class="repo" data-repo="${r.fullName}"><td><a href="${r.href}">${r.fullName}</a>${r.private ? html` <span class="pill">private</span>` : ""}</td><td class="queue">${figure(r.queueLength)}</td><td class="claims">${figure(r.liveClaims)}</td><td class="stuck">${figure(r.stuck)}</td></tr>`,
        )}</tbody></table></div>${
          m.repos.some((r) => r.queueLength === null || r.stuck === null)
            ? html`<p class="empty">–: not known yet (the repository has not pushed its queue to the account, or did not answer).</p>`
            : ""
        }`,
  );
  const next = section(
    `Next in the queue (${m.next.length} of ${m.queueTotal})`,
    "next",
    m.next.length === 0
      ? none("Nothing is claimable right now.")
      : html`<div class="scroll"><table><thead><tr><th>Issue</th><th>Why it is ready</th></tr></thead><tbody>${m.next.map(
          (q) =>
            html`<tr class="next" data-repo="${q.repo}" data-number="${q.number}"><td><a href="${q.url}">${q.repo}#${q.number}</a> ${q.title}</td><td>${q.reason}</td></tr>`,
        )}</tbody></table></div>`,
  );
  return layout(
    `${m.owner} · switchyard`,
    m.viewer,
    html`<h1>${m.owner}</h1>
<p class="sub">As of ${m.now} · the repositories of this account you can see, and its queue (the org queue's fair order) over them</p>
${next}${repos}`,
  );
}

export function welcomePage(): Html {
  return layout(
    "switchyard",
    null,
    html`<section class="card"><h1>switchyard</h1>
<p>The issue graph, queue and claims of the repositories switchyard serves.</p>
<p><a class="button" href="/login">Sign in with GitHub</a></p></section>`,
  );
}

export function messagePage(title: string, message: string, viewer: string | null): Html {
  return layout(
    `${title} · switchyard`,
    viewer,
    html`<section class="card"><h1>${title}</h1><p>${message}</p><p><a href="/">Back to your installations</a></p></section>`,
  );
}
