/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For the standalone build only, never part of the suite in a kernel tree:
 * what the test modules use that older kernels name otherwise. The build
 * force-includes it in every module source (KCFLAGS=-include, compat.mk).
 *
 * system_dfl_wq: the system workqueue whose workers are bound to no CPU
 * ("events_unbound"). 6.17 gave it this name (commit 128ea9f6ccfb, also in
 * 6.12.y: 6.12.118 has it, 6.1.192 does not) and 7.2 (7.2.13) allocates
 * the old system_unbound_wq with __WQ_DEPRECATED, so that __queue_work()
 * warns once "workqueue: work func ... enqueued on deprecated workqueue"
 * (kernel/workqueue.c). Before 6.17 the old name is the only one in
 * mainline, and never warns.
 */
#ifndef MA_COMPAT_MODULES_H
#define MA_COMPAT_MODULES_H

#include <linux/version.h>
#include <linux/workqueue.h>

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 17, 0)
#define system_dfl_wq	system_unbound_wq
#endif

#endif /* MA_COMPAT_MODULES_H */
