// SPDX-License-Identifier: GPL-2.0
/*
 * ma_plain - tests how long a load with no async use of its own waits
 *
 * The control in every policy measurement of the module_async selftest.
 * Loaded alone, it gives the run's baseline where the kernel shows no
 * stacks: how long a load takes when nothing else is going on, from which
 * the runner derives how long to wait before calling a load "held" (where
 * it can, the runner sees the load blocked in do_init_module()'s wait).
 * Loaded while an unrelated async job is held
 * (ma_gate), it shows the kernel's policy: since 5.17, do_init_module()
 * waits for all async work (always-sync), even though this module queued
 * none; with the 3.8 PF_USED_ASYNC flag it skips the wait (skip-if-unused);
 * with async_probe=1 in its parameters it skips the wait on every kernel.
 *
 * It has no knobs: it must not queue work, sleep or fail.
 */
#include <linux/module.h>

static int __init ma_plain_init(void)
{
	return 0;
}
module_init(ma_plain_init);

static void __exit ma_plain_exit(void)
{
}
module_exit(ma_plain_exit);

MODULE_DESCRIPTION("module_async: a module with no async use");
MODULE_LICENSE("GPL");
