// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's own dump of blocked tasks (see sysrq.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "child.h"
#include "diag.h"
#include "kmsg.h"
#include "sysrq.h"

#define SYSRQ_TRIGGER		"/proc/sysrq-trigger"
#define SYSRQ_HEADER		"sysrq: Show Blocked State"

/* A write the watchdog gave up on: killed, reaped within this if it can. */
#define SYSRQ_ABANDON_MS	100

void blocked_dump_reset(struct blocked_dump *d)
{
	memset(d, 0, sizeof(*d));
}

/* "task:%-15.15s state:%c stack:%-5lu pid:%-5d ppid:%-6d flags:0x%08lx" */
static bool parse_task_line(const char *msg, struct task_stack *t)
{
	const char *state, *pid, *ppid;
	size_t n;

	if (strncmp(msg, "task:", 5))
		return false;
	state = strstr(msg, " state:");
	pid = state ? strstr(state, " pid:") : NULL;
	if (!pid)
		return false;
	memset(t, 0, sizeof(*t));
	n = state - (msg + 5);
	while (n && msg[5 + n - 1] == ' ')
		n--;
	snprintf(t->comm, sizeof(t->comm), "%.*s", (int)n, msg + 5);
	t->state = state[7];
	t->pid = atoi(pid + 5);
	ppid = strstr(pid, " ppid:");
	t->ppid = ppid ? atoi(ppid + 6) : 0;
	return true;
}

void blocked_dump_message(struct blocked_dump *d, const char *msg)
{
	struct task_set *set = &d->tasks;
	struct task_stack t;

	d->nr_records++;
	if (!strcmp(msg, SYSRQ_HEADER)) {
		d->header = true;
		d->in_task = false;
		return;
	}
	if (parse_task_line(msg, &t)) {
		/* A task twice (a hung-task report meanwhile): the first counts. */
		d->in_task = !task_set_find(set, t.pid) &&
			     task_set_add(set, &t);
		return;
	}
	/* Frames until the next task; other lines (registers...) are not. */
	if (d->in_task)
		task_stack_add(&set->tasks[set->nr - 1], msg);
}

static void parse_message(void *arg, const char *msg)
{
	blocked_dump_message(arg, msg);
}

static void write_trigger(void *arg, struct child_report *report)
{
	int fd = open(SYSRQ_TRIGGER, O_WRONLY | O_CLOEXEC);

	(void)arg;
	report->ret = fd < 0 || write(fd, "w", 1) != 1 ? -1 : 0;
	report->err = report->ret ? errno : 0;
	if (fd >= 0)
		close(fd);
}

int sysrq_show_blocked(struct blocked_dump *d, int timeout_ms)
{
	long long deadline = now_us() + timeout_ms * 1000LL;
	struct task_stack *t;
	struct child c;
	unsigned int i;
	int fd, ret;

	blocked_dump_reset(d);
	if (access(SYSRQ_TRIGGER, W_OK))
		return -errno;
	fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (lseek(fd, 0, SEEK_END) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}

	ret = child_start(&c, write_trigger, NULL);
	if (!ret) {
		switch (child_wait(&c, timeout_ms)) {
		case CHILD_REPORTED:
			ret = c.report.ret ? -c.report.err : 0;
			break;
		case CHILD_RUNNING:
			child_abandon(&c, SYSRQ_ABANDON_MS);
			ret = -ETIMEDOUT;
			break;
		default:
			ret = -ECHILD;
			break;
		}
	}
	if (!ret) {
		long long left_ms = (deadline - now_us()) / 1000;

		ret = kmsg_each(fd, parse_message, d,
				left_ms > 0 ? left_ms : 1);
		ret = ret < 0 ? ret : 0;
	}
	for (i = 0; i < d->tasks.nr; i++) {
		t = &d->tasks.tasks[i];
		if (t->ppid > 0)
			task_comm(t->ppid, t->parent_comm,
				  sizeof(t->parent_comm));
	}
	close(fd);
	return ret;
}
