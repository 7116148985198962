// SPDX-License-Identifier: GPL-2.0
/*
 * ma_fail - a module whose init fails, as a driver's does with no device
 *
 * Its init returns -ENODEV, as most of the inits systemd-udevd's workers
 * run do on hardware that is not there; it uses no async. The runner (case
 * same_task_loads_after_failed_init) loads it and then, from the same task,
 * ma_async_init: whatever the failed load left attached to its task must
 * not change what the next load waits for.
 */
#include <linux/errno.h>
#include <linux/module.h>

static int __init ma_fail_init(void)
{
	return -ENODEV;
}
module_init(ma_fail_init);

MODULE_DESCRIPTION("module_async: a module whose init fails with -ENODEV");
MODULE_LICENSE("GPL");
