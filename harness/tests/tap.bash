# SPDX-License-Identifier: GPL-2.0
#
# harness/tests/tap.bash: TAP counters for the harness's tests, sourced
# after "$tmp" is set.  ok/not_ok print one case; expect DESCRIPTION
# COMMAND... passes when COMMAND succeeds and quotes its output when not.
# The caller ends with: echo "1..$n"; [ $bad -eq 0 ]
: "${tmp:?tap.bash: set tmp before sourcing it}"
n=0
bad=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); bad=$((bad + 1)); echo "not ok $n - $1"; }
expect() {
	local what=$1
	shift
	if "$@" >"$tmp/out" 2>&1; then ok "$what"; else not_ok "$what"; sed 's/^/#   /' "$tmp/out"; fi
}
