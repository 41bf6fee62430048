#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# harness/tests/shared-lines.sh: harness/prof/shared.c, the plugin that
# finds cache lines written by more than one vCPU, finds one and only that
# one.  In a 2-vCPU guest (any kernel: stock 6.1's image when there is one),
# shared-lines.c's two pinned threads write one line together (round 0),
# then a line each (round 1), 10,000 times each; the plugin must report the
# first line as written by both vCPUs, 10,000 writes each by the one store
# instruction, and neither line of round 1.  TAP on stdout; one guest boot
# under the plugin, about 20 s here.  Skipped (1..0) without an image.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$(dirname "$here")")
B=$top/build

image=$B/stock/bzImage
[ -f "$image" ] || image=$B/bzImage
map=$B/linux-stock/obj/System.map
[ "$image" = "$B/stock/bzImage" ] || map=$B/linux/obj/System.map
if [ ! -f "$image" ] || [ ! -f "$map" ]; then
	echo "1..0 # SKIP no kernel image to boot"
	exit 0
fi
echo "1..4"
plugin=$("$top/harness/prof/shared-lines" --build) || { echo "Bail out! plugin does not build"; exit 1; }
prog=$B/prof/shared-lines
gcc -O2 -Wall -pthread -o "$prog" "$here/shared-lines.c" || { echo "Bail out! test program does not build"; exit 1; }
raw=$B/prof/shared-lines-test.raw
rm -f "$raw"
toggle=$(awk '$3 == "__x64_sys_sync" { print $1; exit }' "$map")
got=$("$top/harness/vm" --kernel "$image" --cpus 2 --timeout 300 --quiet \
	--console "$B/prof/console-shared-test.log" \
	--plugin "$plugin,arg=toggle=$toggle,arg=out=$raw,arg=user=1" -- "$prog")
rc=$?

n=0 bad=0
check() {	# check DESCRIPTION COMMAND...
	n=$((n + 1))
	if "${@:2}"; then
		echo "ok $n - $1"
	else
		bad=$((bad + 1))
		echo "not ok $n - $1"
	fi
}
line0=$(awk '$1 == "line" && $2 == 0 { print $3; exit }' <<< "$got")
lines1=$(awk '$1 == "line" && $2 == 1 { print $3 }' <<< "$got")
pc=$(awk '$1 == "pc" { sub(/^0x/, "", $3); print $3; exit }' <<< "$got")
echo "#   guest exit status $rc"
check "the guest ran the program and the plugin wrote two rounds" \
	test "$rc" = 0 -a -n "$line0" -a -n "$pc" -a "$(grep -c '^R [01] ' "$raw" 2>/dev/null)" = 2
check "round 0: the line both threads write is written by vCPUs 0 and 1" \
	grep -q "^L 0 $line0 3 " "$raw"
check "round 0: 10,000 writes by each vCPU, all by the store instruction" \
	test "$(awk -v l="$line0" -v pc="$pc" '$1 == "W" && $2 == 0 && $3 == l { print $4, $5, $6 }' "$raw" | sort | tr '\n' ' ')" \
	= "0 $pc 10000 1 $pc 10000 "
shared1=
for l in $lines1; do
	grep -q "^L 1 $l " "$raw" && shared1="$shared1 $l"
done
[ -z "$shared1" ] || echo "#   reported in round 1:$shared1"
check "round 1: a line each is not reported" test -z "$shared1"
[ $bad = 0 ]
