#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# harness/tests/libs.sh: the harness's two libraries, harness/lib.sh
# (shell) and harness/lib.py (Python), answer as their callers expect.
# TAP on stdout; exit status 1 when a case fails.  No build, no guest:
# under a second.
set -u
here=$(cd "$(dirname "$0")" && pwd)
harness=$(dirname "$here")

n=0
bad=0
# check DESCRIPTION GOT WANT
check() {
	n=$((n + 1))
	if [ "$2" = "$3" ]; then
		echo "ok $n - $1"
	else
		bad=$((bad + 1))
		echo "not ok $n - $1"
		echo "#   got:  '$2'"
		echo "#   want: '$3'"
	fi
}

# Sourced from anywhere, it finds the repo by its own path.
got=$(cd / && bash -c '. "$1" && echo "$top"' _ "$harness/lib.sh")
check "lib.sh: top is the repo" "$got" "$(dirname "$harness")"

sh_lib() { (cd / && bash -c ". '$harness/lib.sh' && $1" 2>&1); echo "status $?"; }
top=$(dirname "$harness")
check "kernel_image ours" "$(sh_lib 'kernel_image ours')" "$top/build/bzImage
status 0"
check "kernel_image stock" "$(sh_lib 'kernel_image stock')" "$top/build/stock/bzImage
status 0"
check "kernel_image stock-6.12" "$(sh_lib 'kernel_image stock-6.12')" "$top/build/stock-6.12/bzImage
status 0"
check "kernel_image of an unknown kernel: status 1, nothing printed" \
	"$(sh_lib 'kernel_image stock-6.2')" "status 1"
check "kernel_tree stock" "$(sh_lib 'kernel_tree stock')" "$top/build/linux-stock
status 0"
check "kernel_tree of an unknown kernel" "$(sh_lib 'kernel_tree bogus')" "status 1"
# Every kernel of $KERNELS has an image and a tree.
got=$(sh_lib 'for k in $KERNELS; do kernel_image $k >/dev/null && kernel_tree $k >/dev/null || echo "no $k"; done')
check "every kernel of KERNELS maps" "$got" "status 0"
check "step" "$(sh_lib 'step MAKE "a kernel"')" "  MAKE    a kernel
status 0"
# An installed package needs nothing: no output, no apt-get.
check "need_packages, all installed" "$(sh_lib 'need_packages test /dev/null bash coreutils')" "status 0"
check "need_packages --no-recommends, all installed" \
	"$(sh_lib 'need_packages --no-recommends test /dev/null bash coreutils')" "status 0"

# lib.py: importable from harness/, and its series model is the one
# harness/series --list prints (the parts of `series`, in order).
got=$(cd "$harness" && python3 -c '
import lib
_, take = lib.plan(False, quiet=True)
parts = {p for _, ps, _ in take for p in ps}
print(" ".join(e for e in lib.series_entries() if e in parts))' 2>&1)
want=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$top/series" | tr '\n' ' ')
check "lib.py: plan() takes every part of series" "$got" "${want% }"
got=$("$harness/series" --list 2>&1 | tr '\n' ' ')
check "harness/series --list (through lib.py)" "${got% }" "${want% }"
got=$(cd "$harness" && python3 -c 'import lib; print(lib.files_of("series") == ["series"])' 2>&1)
check "lib.py: files_of a file part" "$got" "True"
# harness/lint loads lib.py, not harness/series.
got=$(grep -c 'SourceFileLoader' "$harness/lint")
check "harness/lint imports lib.py" "$got" "0"

echo "1..$n"
[ "$bad" = 0 ]
