echo "stress-ng --uprobe: its uprobe stressor runs 10 s, reads events, cleans up"
. "$(dirname "$0")/lib.bash"
need stress-ng
# One instance: a second one cannot open the trace pipe the first holds
# (EBUSY), gives up and leaves its probe defined, on every kernel.
out=$(stress-ng --uprobe 1 --timeout 10s --metrics-brief 2>&1)
st=$?
echo "$out" | grep -E "metrc:.* uprobe |successful|fail|error" | head -5
expect "stress-ng exit status" 0 "$st"
ops=$(echo "$out" | awk '$2 == "metrc:" && $4 == "uprobe" && $5 ~ /^[0-9]+$/ { print $5; exit }')
expect "stress-ng counted its uprobe events" yes "$([ "${ops:-0}" -ge 1000 ] && echo yes || echo "no (${ops:-none})")"
left=$(grep -c stressng /sys/kernel/tracing/uprobe_events)
expect "probes left defined" 0 "$left"
