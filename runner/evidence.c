// SPDX-License-Identifier: GPL-2.0
/*
 * The evidence of a deadlock, printed as "#" lines before the case's
 * TIMEOUT: the kernel's log since the case began, the stuck tasks' stacks,
 * the kernel's dump of blocked tasks (sysrq w) and the wait-for cycle.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"

/* The kernel log since the case began, for a case that failed. */
void case_log(struct case_ctx *ctx)
{
	if (!ctx->kmsg_ok)
		return;
	kmsg_scan(&ctx->kmsg);
	if (ctx->kmsg.nr_lines)
		diag("kernel log since the case began:");
	kmsg_report(&ctx->kmsg, "kernel: ");
}

/* Bounds of the evidence of a deadlock: its time and its length. */
#define SYSRQ_DUMP_MS		1000
#define EVIDENCE_TASKS_MAX	6

static bool same_frames(const struct task_stack *a, const struct task_stack *b)
{
	unsigned int i;

	if (a->nr_frames != b->nr_frames)
		return false;
	for (i = 0; i < a->nr_frames; i++)
		if (strcmp(a->frames[i], b->frames[i]))
			return false;
	return true;
}

/*
 * The stacks of the blocked tasks that take part in module loading or async
 * work, as /proc/<pid>/stack shows them; they join @involved.
 */
static void evidence_proc_stacks(struct task_set *involved)
{
	static struct task_set blocked;
	unsigned int i, shown = 0, others = 0;
	struct task_stack *t;

	tasks_read_blocked(&blocked);
	diag("blocked in module loading or async work (/proc/<pid>/stack, generic frames cut):");
	for (i = 0; i < blocked.nr; i++) {
		t = &blocked.tasks[i];
		if (!waitfor_involved(t)) {
			others++;
			continue;
		}
		task_set_add(involved, t);
		if (shown++ < EVIDENCE_TASKS_MAX)
			task_stack_report(t, "  ");
	}
	if (!shown)
		diag("  no such task");
	if (shown > EVIDENCE_TASKS_MAX)
		diag("  ... %u more such tasks", shown - EVIDENCE_TASKS_MAX);
	if (others + blocked.nr_more)
		diag("  (%u other tasks in D state)", others + blocked.nr_more);
}

/*
 * The kernel's own dump of blocked tasks (sysrq w); a stack already shown
 * is not shown again. Tasks seen only here join @involved.
 */
static void evidence_sysrq(struct task_set *involved)
{
	static struct blocked_dump dump;
	const struct task_stack *t, *seen;
	unsigned int i, shown = 0;
	int ret;

	ret = sysrq_show_blocked(&dump, SYSRQ_DUMP_MS);
	if (ret) {
		diag("sysrq w: no dump of blocked tasks: %s", strerror(-ret));
		return;
	}
	if (!dump.header) {
		diag("sysrq w: no dump of blocked tasks in the kernel log");
		return;
	}
	diag("sysrq w: %u blocked tasks", dump.tasks.nr + dump.tasks.nr_more);
	for (i = 0; i < dump.tasks.nr; i++) {
		t = &dump.tasks.tasks[i];
		seen = task_set_find(involved, t->pid);
		if (seen && same_frames(seen, t)) {
			diag("  task %d (%s): as above", t->pid, t->comm);
			continue;
		}
		if (!t->nr_frames) {
			/* A guessing unwinder's dump: every frame is "? ". */
			diag("  task %d (%s) state %c: no reliable frames (%u left out)",
			     t->pid, t->comm, t->state, t->nr_trimmed);
			continue;
		}
		if (!waitfor_involved(t)) {
			diag("  task %d (%s): %s", t->pid, t->comm, t->frames[0]);
			continue;
		}
		if (!seen)
			task_set_add(involved, t);
		if (shown++ < EVIDENCE_TASKS_MAX)
			task_stack_report(t, "  ");
	}
	if (shown > EVIDENCE_TASKS_MAX)
		diag("  ... %u more", shown - EVIDENCE_TASKS_MAX);
}

/*
 * The evidence of a deadlock, from what can be observed now: the kernel's
 * warnings and hung-task reports since the case began, the stacks of the
 * stuck tasks, the kernel's dump of blocked tasks, and the wait-for cycle
 * they show, or what they show instead. Nothing here waits for the kernel
 * to print more: a hung-task report that is not there yet is not waited
 * for, and the dump is read with a short bound.
 */
void deadlock_evidence(struct case_ctx *ctx)
{
	static struct task_set involved;
	long long t0 = now_us();
	char line[1024], secs[16];

	if (ctx->kmsg_ok) {
		case_log(ctx);
		if (!ctx->kmsg.nr_hung &&
		    !sysfs_read("/proc/sys/kernel/hung_task_timeout_secs",
				secs, sizeof(secs)))
			diag("no hung-task report yet (kernel.hung_task_timeout_secs = %s)",
			     secs);
	} else {
		diag("no kernel log: /dev/kmsg cannot be read");
	}

	memset(&involved, 0, sizeof(involved));
	evidence_proc_stacks(&involved);
	evidence_sysrq(&involved);

	waitfor_cycle(&involved, line, sizeof(line));
	diag("wait-for cycle: %s", line);
	diag("evidence taken in %lld ms, %.1f s after the case began",
	     (now_us() - t0) / 1000, (now_us() - ctx->begin_us) / 1e6);
}

/*
 * One look for a wedge's evidence among the blocked tasks: their wait-for
 * cycle (true), else the first task blocked in async_synchronize_* (its pid
 * in *@pid; lib/waitfor.h), seen on its stack, else as its wchan. Where
 * /proc shows no stack of a blocked task, the kernel's dump of blocked
 * tasks (sysrq w) is looked at instead. @seen says what was seen.
 */
static bool wedge_look(char *seen, size_t len, int *pid)
{
	static struct task_set blocked;
	static struct blocked_dump dump;
	const struct task_stack *t;
	bool frames = false, cycle;
	unsigned int i;

	tasks_read_blocked(&blocked);
	cycle = waitfor_wedge(&blocked, seen, len, pid);
	if (cycle || *pid)
		return cycle;
	for (i = 0; i < blocked.nr && !*pid; i++) {
		t = &blocked.tasks[i];
		frames = frames || t->nr_frames;
		if (!t->nr_frames &&
		    task_waits_in(t->pid, SYNC_FUNCTIONS, TASK_VIEW_WCHAN) == 1) {
			*pid = t->pid;
			snprintf(seen, len, "%.*s (pid %d) blocked in %s (wchan)",
				 (int)strcspn(t->comm, "+"), t->comm, t->pid,
				 SYNC_FUNCTIONS);
		}
	}
	if (!*pid && !frames && blocked.nr &&
	    !sysrq_show_blocked(&dump, SYSRQ_DUMP_MS) && dump.header)
		return waitfor_wedge(&dump.tasks, seen, len, pid);
	return false;
}

/*
 * Is the kernel seen wedged, now? The evidence of a deadlock: the blocked
 * tasks' wait-for cycle, or a task blocked in async_synchronize_* (where
 * do_init_module() waits for async work), the same at two looks
 * CYCLE_CONFIRM_MS apart. A wait that outlasted its bound is none: a slow
 * load is still running and seen nowhere there. What was seen in @seen.
 */
bool wedge_seen(char *seen, size_t len)
{
	static char first[1024];
	bool cycle;
	int pid, again;

	cycle = wedge_look(first, sizeof(first), &pid);
	if (!cycle && !pid) {
		snprintf(seen, len, "no task blocked in %s, no wait-for cycle: %s",
			 SYNC_FUNCTIONS, first);
		return false;
	}
	sleep_ms(CYCLE_CONFIRM_MS);
	if (wedge_look(seen, len, &again) && cycle && !strcmp(seen, first))
		return true;
	if (pid && again == pid)
		return true;
	snprintf(seen, len, "%s, seen once, gone %d ms later", first,
		 CYCLE_CONFIRM_MS);
	return false;
}
