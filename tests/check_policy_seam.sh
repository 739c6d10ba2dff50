#!/bin/sh
# The policy seam (docs/scheduler.md): a placement policy sees policy.h
# only.  C cannot hide the node layout that policy.h's inline accessors
# read, so this check holds the policy files to the view:
#   1. policy.h and the headers it includes do not include sched_internal.h;
#   2. policy files (policy*.c, policy_*.h, cost.c) include no project
#      header but policy.h and the policy headers;
#   3. those that handle nodes (name DfNode) name no DfNode field through
#      `->` (the field list is read from struct DfNode in sched_node.h).
# Usage: check_policy_seam.sh SCHEDULER_DIR
set -u
dir=${1:?usage: check_policy_seam.sh SCHEDULER_DIR}
fail=0

bad() {
    echo "policy seam: $*" >&2
    fail=1
}

for h in policy.h sched_base.h sched_node.h sched_ready.h sched_topo.h; do
    [ -f "$dir/$h" ] || { bad "$h missing"; continue; }
    grep -n '#include "sched_internal.h"' "$dir/$h" >/dev/null && bad "$h includes sched_internal.h"
done

fields=$(sed -n '/^struct DfNode {/,/^};/p' "$dir/sched_node.h" |
    sed -e 's|/\*.*||' -e 's/\[.*//' -e 's/;.*//' |
    grep -Eo '[A-Za-z_][A-Za-z0-9_]*[[:space:]]*$' | tr -d ' \t' | sort -u | paste -sd'|' -)
[ -n "$fields" ] || bad "no fields read from struct DfNode in sched_node.h"

files=$(cd "$dir" && ls policy*.c policy_*.h cost.c 2>/dev/null)
[ -n "$files" ] || bad "no policy files in $dir"
for f in $files; do
    p="$dir/$f"
    grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$p" |
        grep -Ev '"policy(_[a-z_]+)?\.h"' | while IFS= read -r line; do
            echo "policy seam: $f includes a core header: $line" >&2
            echo x
        done | grep -q x && fail=1
    if grep -q 'DfNode' "$p"; then
        hits=$(grep -nE -- "->[[:space:]]*($fields)\b" "$p")
        [ -z "$hits" ] || bad "$f reads node fields (use the accessors of policy.h):
$hits"
    fi
done

[ "$fail" -eq 0 ] && echo "policy seam: $(echo $files | wc -w) files hold to policy.h"
exit "$fail"
