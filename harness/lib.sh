# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# harness/lib.sh: what the harness's shell scripts share.  Sourced, not run:
#
#   . "$(dirname "$0")/lib.sh"          (from harness/; ../lib.sh from below)
#
# Sets top (the repo) and B (its build/ directory), and defines:
#
#   step TAG TEXT                  one progress line, "  TAG     TEXT"
#   kernel_image KERNEL            the image of ours|stock|stock-6.12
#   kernel_tree KERNEL             the source tree that image is built from
#   need_packages [--no-recommends] WHO LOG PKG...
#                                  install the Debian packages missing
#   configure_kernel SRC OBJ LOG FRAG...
#                                  tinyconfig + the fragments + olddefconfig
#
# Python's side of the harness (harness/lib.py) configures through
# configure_kernel too, so the sequence is written once.

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
B=$top/build

# The kernels the harness builds, by name.
KERNELS="ours stock stock-6.12"

step() { printf '  %-7s %s\n' "$1" "$2"; }

# kernel_image KERNEL: the bzImage harness/build makes for KERNEL (add
# -debug for the debug variant), or TREE/obj's for a kernel tree's absolute
# path (an A/B build of one's own); status 1, nothing printed, for an
# unknown name.
kernel_image() {
	case "$1" in
	ours) echo "$B/bzImage" ;;
	stock|stock-6.12) echo "$B/$1/bzImage" ;;
	/*) [ -f "$1/obj/arch/x86/boot/bzImage" ] && echo "$1/obj/arch/x86/boot/bzImage" ;;
	*) return 1 ;;
	esac
}

# kernel_tree KERNEL: the tree (objects in TREE/obj) KERNEL is built in
# (an absolute path: that tree).
kernel_tree() {
	case "$1" in
	ours) echo "$B/linux" ;;
	stock) echo "$B/linux-stock" ;;
	stock-6.12) echo "$B/linux-6.12" ;;
	/*) [ -d "$1/obj" ] && echo "$1" ;;
	*) return 1 ;;
	esac
}

# need_packages [--no-recommends] WHO LOG PKG...: install with apt-get the
# Debian packages of the list that are missing.  Quiet when none is.
# Status 0 when they are all there afterwards; 1 when some are missing and
# we are not root (said on stderr, as WHO); 2 when apt-get failed (its log
# is LOG).  --no-recommends: without the packages they recommend.
need_packages() {
	local opt=
	[ "$1" = --no-recommends ] && { opt=--no-install-recommends; shift; }
	local who=$1 log=$2 p missing=
	shift 2
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "$who: missing packages:$missing (run as root to install them)" >&2
		return 1
	fi
	step DEPS "installing:$missing"
	mkdir -p "$(dirname "$log")"
	# shellcheck disable=SC2086
	if ! { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $opt $missing; } >"$log" 2>&1; then
		echo "$who: apt-get failed; see $log" >&2
		tail -n 20 "$log" >&2
		return 2
	fi
}

# configure_kernel SRC OBJ LOG FRAG...: OBJ/.config is SRC's tinyconfig
# with the fragments merged over it and olddefconfig run, in OBJ-cfg; it is
# copied to OBJ/.config only when it differs, so that an unchanged config
# rebuilds nothing.  Nothing is redone when the fragments, the tree's
# Kconfig files (by content: a patch that adds a symbol must reconfigure),
# ARCH and KCONFIG_CC are those of the last complete run.  The make output
# is appended to LOG.  KCONFIG_CC: the compiler (a cross compiler), if not
# gcc.
#
# Status 0: done.  1: done, but some CONFIG_...=y of the fragments did not
# survive olddefconfig (unmet dependencies): their names are in
# $kconfig_unset (an option no Kconfig of the tree defines is no error: a
# "SKIP" line says so).  2: the configuration failed (see LOG).
configure_kernel() {
	local src=$1 obj=$2 log=$3
	shift 3
	local tmp=$obj-cfg key cc=()
	[ -n "${KCONFIG_CC:-}" ] && cc=("CC=$KCONFIG_CC")
	kconfig_unset=
	mkdir -p "$obj" "$tmp"
	key=$( (cat "$@"; git -C "$src" ls-files -s | grep -E "($(printf '\\t')|/)Kconfig[^/]*\$"
		[ -n "${ARCH:-}${KCONFIG_CC:-}" ] && echo "arch ${ARCH:-} cc ${KCONFIG_CC:-}") | sha1sum)
	if [ -f "$obj/.config" ] && [ -f "$tmp/.key" ] && [ "$(cat "$tmp/.key")" = "$key" ]; then
		return 0
	fi
	rm -f "$tmp/.key"
	echo "== configure_kernel $src $obj, $(date -u '+%F %T UTC')" >>"$log"
	{
		make -C "$src" O="$tmp" "${cc[@]}" tinyconfig &&
		"$src/scripts/kconfig/merge_config.sh" -m -O "$tmp" "$tmp/.config" "$@" &&
		make -C "$src" O="$tmp" "${cc[@]}" olddefconfig
	} >>"$log" 2>&1 || return 2
	# Every =y the fragments ask for must have survived olddefconfig.
	local l n
	for l in $(cat "$@" | grep -E '^CONFIG_[A-Za-z0-9_]+=y'); do
		grep -qx "$l" "$tmp/.config" && continue
		n=${l%%=*}
		if ! grep -rqE "^(menu)?config ${n#CONFIG_}\$" --include='Kconfig*' "$src"; then
			step SKIP "$n: no such option in this tree"
			continue
		fi
		kconfig_unset="$kconfig_unset $n"
	done
	cmp -s "$tmp/.config" "$obj/.config" || cp "$tmp/.config" "$obj/.config"
	# A config that lost options is redone next time, and said again.
	[ -n "$kconfig_unset" ] && return 1
	echo "$key" > "$tmp/.key"
}
