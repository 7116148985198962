/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one place where the test modules differ by kernel version.
 *
 * ma_unbound_wq: the system workqueue whose workers are bound to no CPU
 * ("events_unbound"). 6.17 gave it a new name, system_dfl_wq (commit
 * 128ea9f6ccfb, also in 6.12.y: 6.12.118 has it, 6.1.192 does not), and
 * 7.2 (7.2.13) allocates the old system_unbound_wq with __WQ_DEPRECATED, so
 * that __queue_work() warns once "workqueue: work func ... enqueued on
 * deprecated workqueue" (kernel/workqueue.c). Before 6.17 the old name is
 * the only one in mainline, and never warns.
 */
#ifndef _MA_COMPAT_H
#define _MA_COMPAT_H

#include <linux/version.h>
#include <linux/workqueue.h>

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 17, 0)
#define ma_unbound_wq	system_dfl_wq
#else
#define ma_unbound_wq	system_unbound_wq
#endif

#endif /* _MA_COMPAT_H */
