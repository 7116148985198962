/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's own dump of blocked tasks: sysrq "w".
 *
 * Writing 'w' to /proc/sysrq-trigger makes the kernel log every task in
 * uninterruptible sleep with its stack (show_state_filter() and
 * sched_show_task() in kernel/sched/core.c), whatever kernel.sysrq says: the
 * trigger file ignores that mask. The dump is logged before the write
 * returns, so the records that follow the write are read at once, with a
 * short bound, and parsed into a struct task_set. The write itself is made
 * by a child under a watchdog (child.h), as everything that could block.
 *
 * The dump's format, one record per line:
 *   sysrq: Show Blocked State
 *   task:modprobe        state:D stack:0     pid:127   ppid:126    flags:...
 *   Workqueue: events_unbound async_run_entry_fn     (kworkers only)
 *   Call Trace:
 *    <TASK>
 *    __schedule+0x34d/0x9e0
 *    ? __request_module+0x1a5/0x3e0                  (unreliable: dropped)
 *    ma_job_fn+0xa3/0xf0 [ma_request]
 *    </TASK>
 * The hung-task detector's reports use the same task and frame lines.
 */
#ifndef MA_SYSRQ_H
#define MA_SYSRQ_H

#include <stdbool.h>

#include "tasks.h"

struct blocked_dump {
	struct task_set tasks;
	bool header;			/* "sysrq: Show Blocked State" seen */
	bool in_task;			/* frames go to the last task */
	unsigned int nr_records;	/* records read after the trigger */
};

/* Forget what was parsed. */
void blocked_dump_reset(struct blocked_dump *d);

/* Parse one log message of a dump (the record's text, no header). */
void blocked_dump_message(struct blocked_dump *d, const char *msg);

/*
 * Trigger sysrq w and parse what it logged, all within about @timeout_ms.
 * Returns 0, or -errno if the trigger or the log could not be used (no
 * CONFIG_MAGIC_SYSRQ, no /dev/kmsg, the write did not return in time).
 */
int sysrq_show_blocked(struct blocked_dump *d, int timeout_ms);

#endif /* MA_SYSRQ_H */
