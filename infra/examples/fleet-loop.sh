#!/usr/bin/env bash
# One fleet agent as a shell loop over switchyard's API (docs/api.md): claim the queue's next
# issue, run a command for it while heartbeating the claim, release the claim by the command's
# exit status, and go on until the queue is empty. `switchyard work` does the same with more
# care (docs: README); this shows the protocol with curl and jq only.
#
#   SWITCHYARD_URL=https://switchyard.acme.workers.dev SWITCHYARD_TOKEN=syk_... \
#     infra/examples/fleet-loop.sh acme/rocket my-agent -- ./agent.sh
#
# SWITCHYARD_TOKEN is a fleet key (POST /v1/repos/OWNER/NAME/keys, by a repository admin).
# The command sees SWITCHYARD_ISSUE, SWITCHYARD_ISSUE_URL, SWITCHYARD_BRANCH, SWITCHYARD_CLAIM_ID
# and SWITCHYARD_FENCE; it can write to the issue through the fence (see post_comment below).
set -euo pipefail

usage() {
  echo "usage: SWITCHYARD_URL=URL SWITCHYARD_TOKEN=KEY $0 OWNER/NAME AGENT_ID -- COMMAND [ARGS...]" >&2
  exit 2
}
[[ $# -ge 4 && $3 == "--" ]] || usage
: "${SWITCHYARD_URL:?set SWITCHYARD_URL to the Worker URL}"
: "${SWITCHYARD_TOKEN:?set SWITCHYARD_TOKEN to a fleet key}"
command -v jq >/dev/null || { echo "$0: needs jq" >&2; exit 2; }

REPO=$1
AGENT=$2
shift 3
API="${SWITCHYARD_URL%/}/v1/repos/$REPO"
MACHINE=$(hostname)

# POST a JSON body; prints the response body, fails on a status other than the expected ones.
post() { # path body expected-statuses...
  local path=$1 body=$2 out status
  shift 2
  out=$(mktemp)
  status=$(curl -sS -o "$out" -w '%{http_code}' -X POST "$API$path" \
    -H "Authorization: Bearer $SWITCHYARD_TOKEN" -H "content-type: application/json" -d "$body")
  cat "$out"
  rm -f "$out"
  for ok in "$@"; do [[ $status == "$ok" ]] && return 0; done
  echo "$0: POST $path answered $status" >&2
  return 1
}

# A fenced comment: written only while our claim is still the issue's live claim.
post_comment() { # text
  post "/issues/$N/comments" "$(jq -nc --arg c "$CLAIM" --argjson f "$FENCE" --arg b "$1" \
    '{claimId: $c, fence: $f, body: $b}')" 201 >/dev/null
}

while true; do
  GRANT=$(post /claims "$(jq -nc --arg a "$AGENT" --arg m "$MACHINE" '{agentId: $a, machine: $m}')" 201 204)
  if [[ -z $GRANT ]]; then
    echo "queue empty" >&2
    break
  fi
  N=$(jq -r .issue.number <<<"$GRANT")
  CLAIM=$(jq -r .claimId <<<"$GRANT")
  FENCE=$(jq -r .fence <<<"$GRANT")
  TTL=$(($(date -d "$(jq -r .expiresAt <<<"$GRANT")" +%s) - $(date +%s)))
  echo "claimed #$N (fence $FENCE)" >&2

  # Heartbeat every third of the claim's TTL while the command runs.
  (
    while sleep $((TTL > 3 ? TTL / 3 : 1)); do
      post "/issues/$N/claim/heartbeat" "{\"claimId\":\"$CLAIM\",\"fence\":$FENCE}" 200 >/dev/null ||
        echo "heartbeat of #$N failed" >&2
    done
  ) &
  HEARTBEAT=$!

  set +e
  SWITCHYARD_ISSUE=$N SWITCHYARD_ISSUE_URL=$(jq -r .issue.url <<<"$GRANT") \
    SWITCHYARD_BRANCH=$(jq -r .branch <<<"$GRANT") SWITCHYARD_CLAIM_ID=$CLAIM \
    SWITCHYARD_FENCE=$FENCE "$@"
  STATUS=$?
  set -e
  kill "$HEARTBEAT" 2>/dev/null || true
  wait "$HEARTBEAT" 2>/dev/null || true

  if [[ $STATUS -eq 0 ]]; then
    post_comment "Done by $AGENT on $MACHINE." || true
    OUTCOME='"outcome":"done"'
  else
    OUTCOME="\"outcome\":\"failed\",\"note\":\"exit code $STATUS\""
  fi
  post "/issues/$N/claim/release" "{\"claimId\":\"$CLAIM\",\"fence\":$FENCE,$OUTCOME}" 200 >/dev/null
  echo "released #$N ($STATUS)" >&2
done
