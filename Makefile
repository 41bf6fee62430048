# SPDX-License-Identifier: GPL-2.0
#
# Our uprobes series for Linux 6.1: build, boot and test it in QEMU.
#
#   make demo                  a libc malloc probe in a guest running our kernel
#   make check                 every test suite on our kernel, one summary
#   make check KERNEL=stock    the same suites on stock 6.1 (KERNEL=stock-6.12 too)
#   make check-quick           KUnit and selftests/uprobes only
#   make check-debug           make check on the lockdep/KASAN/DEBUG_VM kernel
#   make kernel [KERNEL=...]   just build (build/bzImage, build/stock/bzImage, ...)
#   make vm CMD='uname -r'     run one command in a guest (see harness/vm)
#   make series                the series as mailable patches in build/series/
#   make series-check          git am them on the tarball, build after each patch
#   make lint                  checkpatch, kernel-doc, sparse, W=1 on our files and patches
#   make check-arch            i386 and arm64 builds of the series (vmlinux)
#   make check-i386            boot i386 guests (ours, stock 6.1): KUnit and a smoke test
#   make fuzz                  differential instruction fuzzing, 25 min (FUZZ_ARGS='[--compat] --seed S --seconds T')
#   make bench                 hit and attach cost, ours vs stock 6.1 and 6.12
#   make readme                README.md's "Current results" from the last runs
#
# Everything is kept under build/; logs in build/logs/.

KERNEL ?= ours
CMD ?= uname -a
# The image harness/build makes for KERNEL (harness/lib.sh: kernel_image).
IMAGE = $(shell bash -c '. harness/lib.sh && kernel_image $(KERNEL)')

.PHONY: demo check check-quick check-debug kernel vm clean help

help:
	@sed -n 's/^#   //p' $(firstword $(MAKEFILE_LIST))

demo:
	@harness/build $(KERNEL)
	@harness/vm --kernel $(IMAGE) --console build/logs/demo-console.log -- $(CURDIR)/harness/guest/demo

# On our kernel, make check runs make lint first and counts it as one
# more test ("lint") in the summary.
check:
ifeq ($(KERNEL),ours)
	@harness/lint --quiet || true
	@UPROBES_LINT_RESULT=$(CURDIR)/build/logs/lint.txt harness/check $(KERNEL)
else
	@harness/check $(KERNEL)
endif

check-quick:
	@harness/check --quick $(KERNEL)

check-debug:
	@harness/check --debug $(KERNEL)

kernel:
	@harness/build $(KERNEL)

vm:
	@harness/vm --kernel $(IMAGE) -- $(CMD)

clean:
	rm -rf build

# make fuzz: uprobe_insnfuzz with a fresh seed for 1500 s on our kernel
# (harness/fuzz; FUZZ_ARGS='--seed S --seconds T', --compat for 32-bit
# code, KERNEL=stock).
.PHONY: fuzz
fuzz:
	@harness/fuzz $(FUZZ_ARGS) $(KERNEL)

# make bench: hit and attach cost on ours, stock 6.1 and stock 6.12
# (harness/bench/run; tables and plot in build/bench/).  A tool, not a test.
.PHONY: bench
bench:
	@harness/bench/run $(BENCH_ARGS)

# make readme: rewrite README.md's "Current results" block from the last
# make check of each kernel (build/logs/summary-*.txt) and from
# harness/bench/results.md (harness/readme-results).
.PHONY: readme
readme:
	@harness/readme-results

# make series: git format-patch of our series, cut as harness/data/series-split
# says, with a cover letter, in build/series/.  make series-check applies
# it to the tarball and builds the kernel after every patch (slow: not
# part of make check).  SERIES_ARGS=--all: every part, in `series` or not.
.PHONY: series series-check
series:
	@harness/series $(SERIES_ARGS)

series-check:
	@harness/series --check $(SERIES_ARGS)

# make lint: checkpatch.pl --strict, kernel-doc, sparse and W=1 on our files
# and on every patch of make series (harness/lint; accepted findings, each
# with its reason, in harness/data/lint-exceptions).  LINT_ARGS=--all: also the
# parts not yet in `series`.  make check-arch: i386 and arm64 (cross)
# builds of the series, vmlinux linked (harness/check-arch; ARCH_ARGS=--objs:
# only the objects that use uprobes, faster; --arch i386 or arm64: one).
# make check-i386: ours and stock 6.1 built for i386 the same way, each
# booted with a 32-bit static /init that probes itself (harness/check-i386).
.PHONY: lint check-arch check-i386
lint:
	@harness/lint $(LINT_ARGS)

check-arch:
	@harness/check-arch $(ARCH_ARGS)

check-i386:
	@harness/check-i386
