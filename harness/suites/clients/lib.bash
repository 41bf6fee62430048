# SPDX-License-Identifier: GPL-2.0
# Shared by the client tests: each test is a bash script whose first output
# line says what it shows; exit 0 pass, 4 skip (tool missing), 1 fail.
T=${CLIENT_BIN:?}/target
LIBC=/lib/x86_64-linux-gnu/libc.so.6
export PERF_PAGER=cat HOME=${HOME:-/tmp}
cd /tmp

need() {
	command -v "$1" >/dev/null || { echo "SKIP: $1 is not installed"; exit 4; }
}

# expect WHAT EXPECTED SEEN
expect() {
	if [ "$2" != "$3" ]; then
		echo "FAIL: $1: expected '$2', saw '$3'"
		exit 1
	fi
	echo "ok: $1 = $3"
}

cleanup_perf_probes() {
	perf probe -q -d 'probe_target:*' >/dev/null 2>&1
	perf probe -q -d 'probe_libc:*' >/dev/null 2>&1
	true
}
