#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# harness/tests/readme.sh: the top README stays a front door (at most 200
# lines, its results block in place), and make readme (harness/readme-results)
# writes that block from a summary and the benchmark's results file.  On
# copies in a temporary directory: nothing of the repo is written.  TAP on
# stdout; exit status 1 when a case fails.  Under a second.
set -u
here=$(cd "$(dirname "$0")" && pwd)
harness=$(dirname "$here")
top=$(dirname "$harness")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=harness/tests/tap.bash
. "$here/tap.bash"

lines=$(wc -l < "$top/README.md")
expect "README.md has at most 200 lines ($lines)" test "$lines" -le 200
expect "README.md has its results block" grep -q '^<!-- results:start' "$top/README.md"

# A summary as harness/check writes it, and a README with an empty block.
mkdir "$tmp/logs"
{
	echo "# harness/check ours at 1234567+, started 2026-12-02 06:00 UTC"
	echo "PASS  kunit/uprobes_core/a"
	echo "FAIL  selftests/uprobe_basic/basic.x     # why"
	echo "1 passed, 1 failed, 0 skipped"
} > "$tmp/logs/summary-ours.txt"
printf '# t\n\n<!-- results:start -->\nold\n<!-- results:end -->\n\nend\n' > "$tmp/README.md"
w() { "$harness/readme-results" --logs "$tmp/logs" --bench "$harness/bench/results.md" "$@" "$tmp/README.md"; }
expect "readme-results --check: a stale block is reported (exit 1)" bash -c '"$0" "$@"; [ $? = 1 ]' \
	"$harness/readme-results" --check --logs "$tmp/logs" --bench "$harness/bench/results.md" "$tmp/README.md"
expect "readme-results writes the block" w
expect "ours' row: counts and commit" grep -qE '^\| ours \(`make check`\) \| 1 \| 1 \| 0 \| 0 \| 1234567\+ \|' "$tmp/README.md"
expect "the failed test is named" grep -q 'uprobe_basic/basic.x' "$tmp/README.md"
expect "a kernel without a summary says so" grep -q '^| stock 6.1 .*no summary here' "$tmp/README.md"
expect "the hit rows of bench/results.md" grep -qE '^\| nop \| [0-9,]+ \| 0\.[0-9]+ \|' "$tmp/README.md"
expect "the attach row of bench/results.md" grep -q '^Enabling then disabling 10,000 probes' "$tmp/README.md"
expect "text outside the block is kept" bash -c 'head -n 1 "$0" | grep -qx "# t" && tail -n 1 "$0" | grep -qx end' "$tmp/README.md"
expect "written again, the block is up to date" w --check
# The real README's block parses the same way (nothing written).
cp "$top/README.md" "$tmp/README.md"
expect "README.md's block can be rewritten" w

echo "1..$n"
[ "$bad" = 0 ]
