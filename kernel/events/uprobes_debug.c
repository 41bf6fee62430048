// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uprobes: race windows widened for the selftests.
 *
 * With CONFIG_UPROBES_RACE_DELAYS, /sys/kernel/debug/uprobes/delay_*_us
 * makes the core spin that many microseconds at a racing point (0: not at
 * all), which may be in atomic context.  Not for production kernels.
 */

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/init.h>
#include <linux/uprobes.h>

#include "uprobes_internal.h"

#define UPROBE_DELAY_MAX_US	20000

static u32 uprobe_delays[UPROBE_DELAY_NR];

static const char *const uprobe_delay_names[UPROBE_DELAY_NR] = {
	[UPROBE_DELAY_MUNMAP]	= "delay_munmap_us",
	[UPROBE_DELAY_DROP]	= "delay_drop_us",
};

/**
 * __uprobe_debug_delay - spin at a racing point, if a test asked for it
 * @point: which point (UPROBE_DELAY_*)
 *
 * Context: any but NMI.
 */
void __uprobe_debug_delay(enum uprobe_delay_point point)
{
	u32 us = min_t(u32, READ_ONCE(uprobe_delays[point]),
		       UPROBE_DELAY_MAX_US);

	if (us) {
		mdelay(us / 1000);
		udelay(us % 1000);
	}
}

static int __init uprobe_debug_init(void)
{
	struct dentry *dir = debugfs_create_dir("uprobes", NULL);
	int i;

	for (i = 0; i < UPROBE_DELAY_NR; i++)
		debugfs_create_u32(uprobe_delay_names[i], 0600, dir,
				   &uprobe_delays[i]);
	return 0;
}
late_initcall(uprobe_debug_init);
