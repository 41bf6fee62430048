#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# harness/tests/build-usage.sh: harness/build refuses bad arguments with a
# usage message and exit status 2, before it installs, unpacks or writes
# anything.  TAP on stdout; exit status 1 when a case fails.
#
# Cheap by construction: harness/build runs from a copy (with the
# harness/lib.sh it sources) in an empty temporary directory, without
# harness/deps, the series or a tarball next to it, so even a harness/build that wrongly went on to build could get
# no further than its first step.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# HARNESS_BUILD: another copy of the script to test (default: ours).
src=${HARNESS_BUILD:-$(dirname "$here")/build}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/harness"
cp "$src" "$tmp/harness/build"
cp "$(dirname "$here")/lib.sh" "$tmp/harness/lib.sh"
chmod +x "$tmp/harness/build"

n=0
bad=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); bad=$((bad + 1))
	echo "not ok $n - $1"
	sed 's/^/#   /' "$tmp/out" "$tmp/err"
}

# expect DESCRIPTION STATUS STREAM PATTERN ARGS...: harness/build ARGS
# ends with STATUS, prints a line matching the extended regex PATTERN on
# STREAM (out or err), reports no shell error ("line N:"), and leaves
# nothing behind (no build/ directory).
expect() {
	local what=$1 want=$2 stream=$3 pat=$4 rc
	shift 4
	rm -rf "$tmp/build"
	(cd "$tmp" && timeout 20 harness/build "$@") >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	if [ "$rc" != "$want" ]; then
		not_ok "$what: exit status $rc, want $want"
	elif ! grep -qE "$pat" "$tmp/$stream"; then
		not_ok "$what: no line matching '$pat' on std$stream"
	elif grep -qE '(^|: )line [0-9]+: ' "$tmp/err"; then
		not_ok "$what: a shell error on stderr"
	elif [ -e "$tmp/build" ]; then
		not_ok "$what: build/ was created"
	else
		ok "$what"
	fi
}

usage_line='^usage: harness/build '
expect "unknown kernel" 2 err "^harness/build: unknown kernel 'no-such-kernel'\$" no-such-kernel
expect "unknown kernel: usage" 2 err "$usage_line" no-such-kernel
expect "unknown kernel after --debug" 2 err "unknown kernel 'stock-6.2'" --debug stock-6.2
expect "unknown option" 2 err "unknown option '--bogus'" --bogus ours
expect "too many arguments" 2 err "too many arguments" ours stock
expect "dev without NAME" 2 err "dev needs a NAME" dev
expect "dev with a slash in NAME" 2 err "dev needs a NAME" dev a/b kernel/events
expect "--help" 0 out "$usage_line" --help
# An error prints nothing on stdout: the usage goes to stderr.
expect "unknown kernel, again" 2 err . no-such-kernel
if [ -s "$tmp/out" ]; then
	not_ok "unknown kernel: stdout not empty"
else
	ok "unknown kernel: nothing on stdout"
fi

echo "1..$n"
[ "$bad" = 0 ]
