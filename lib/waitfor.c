// SPDX-License-Identifier: GPL-2.0
/*
 * The wait-for cycle of a module loading deadlock (see waitfor.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "diag.h"
#include "waitfor.h"

#define WAITFOR_SEEN_MAX	4	/* tasks named when there is no cycle */

/* Functions on the stack of a task that takes part in module loading. */
static const char * const involved_functions[] = {
	"__request_module", "call_usermodehelper_exec", "do_init_module",
	"load_module", "__do_sys_finit_module", "__do_sys_init_module",
	"__do_sys_delete_module", "async_synchronize_*", "async_run_entry_fn",
};

/*
 * The kernel's callers of request_module() that a cycle names, innermost
 * first: the elevator's, from a write to queue/scheduler, is
 * elevator_get() up to 6.1 (block/elevator.c), elv_iosched_load_module()
 * from 6.12 on, called by elv_iosched_store(), which is all that a stack
 * shows when the compiler inlined it.
 */
static const char * const request_callers[] = {
	"elevator_get", "elv_iosched_load_module", "elv_iosched_store",
};

static const char * const loader_comms[] = {
	"modprobe", "insmod", "rmmod", "kmod",
};

struct line {
	char *buf;
	size_t len, used;
};

static void __printf(2, 3)
add(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->used >= l->len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->used, l->len - l->used, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->used += n;
}

bool waitfor_involved(const struct task_stack *t)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(loader_comms); i++)
		if (!strcmp(t->comm, loader_comms[i]))
			return true;
	for (i = 0; i < ARRAY_SIZE(involved_functions); i++)
		if (task_stack_find(t, involved_functions[i]) >= 0)
			return true;
	return false;
}

/* "kworker/u4:1+events_unbound" -> "kworker/u4:1 (pid 25)" */
static void add_task(struct line *l, const struct task_stack *t)
{
	add(l, "%.*s (pid %d)", (int)strcspn(t->comm, "+"), t->comm, t->pid);
}

/* Frame @i as "f [mod]", without offsets. */
static void add_frame(struct line *l, const struct task_stack *t, int i)
{
	const char *module = strchr(t->frames[i], ' ');
	char func[TASK_FRAME_LEN];

	task_frame_function(t, i, func, sizeof(func));
	add(l, "%s%s", func, module ? module : "");
}

/* The module a loader's command line names: its first operand. */
static void loader_target(const struct task_stack *t, char *buf, size_t len)
{
	char args[TASK_CMDLINE_LEN], *arg, *save = NULL, *base;
	bool options = true;

	snprintf(args, sizeof(args), "%s", t->cmdline);
	snprintf(buf, len, "?");
	arg = strtok_r(args, " ", &save);		/* argv[0] */
	while (arg && (arg = strtok_r(NULL, " ", &save))) {
		if (options && !strcmp(arg, "--")) {
			options = false;
			continue;
		}
		if (options && arg[0] == '-')
			continue;
		base = strrchr(arg, '/');
		base = base ? base + 1 : arg;
		base[strcspn(base, ".")] = '\0';	/* "ma_x.ko" */
		snprintf(buf, len, "%s", base);
		return;
	}
}

/* An async job waiting in request_module(). */
static bool is_async_requester(const struct task_stack *t)
{
	return task_stack_find(t, "__request_module") >= 0 &&
	       task_stack_find(t, "async_run_entry_fn") >= 0;
}

/* A module's init that waits for async work. */
static bool is_syncing_loader(const struct task_stack *t)
{
	return task_stack_find(t, "do_init_module") >= 0 &&
	       task_stack_find(t, "async_synchronize*") >= 0;
}

/* A module's load in its init, or after it. */
static bool is_in_init(const struct task_stack *t)
{
	return task_stack_find(t, "do_init_module") >= 0;
}

/* Started by the kernel's usermode helper: its parent is a kernel thread. */
static bool is_usermode_helper(const struct task_stack *t)
{
	return !strncmp(t->parent_comm, "kworker/", 8) ||
	       !strcmp(t->parent_comm, "kthreadd");
}

static const struct task_stack *find_task(const struct task_set *set,
					  bool (*match)(const struct task_stack *))
{
	unsigned int i;

	for (i = 0; i < set->nr; i++)
		if (match(&set->tasks[i]))
			return &set->tasks[i];
	return NULL;
}

/*
 * A usermode helper's loader asleep in a load's system call: it waits for
 * the load under way of the module its command line names
 * (task_waits_for_a_load(): 5.10's and 6.1's add_unformed_module(), 7.2's
 * module_patient_check_exists() or idempotent_wait_for_completion()).
 */
static bool is_waiting_helper(const struct task_stack *t)
{
	return is_usermode_helper(t) && task_waits_for_a_load(t);
}

static unsigned int count_tasks(const struct task_set *set,
				bool (*match)(const struct task_stack *))
{
	unsigned int i, n = 0;

	for (i = 0; i < set->nr; i++)
		n += match(&set->tasks[i]);
	return n;
}

static const struct task_stack *find_helper_loader(const struct task_set *set)
{
	unsigned int i;

	for (i = 0; i < set->nr; i++)
		if (is_syncing_loader(&set->tasks[i]) &&
		    is_usermode_helper(&set->tasks[i]))
			return &set->tasks[i];
	return find_task(set, is_syncing_loader);
}

/*
 * The frame of who called request_module() in @r, between @request (the
 * __request_module frame) and @job (the job's): a known caller wherever it
 * is, for a guessing unwinder puts stale frames above it; else the frame
 * next to __request_module, if it is not the job itself; else -1.
 */
static int request_caller(const struct task_stack *r, int request, int job)
{
	char func[TASK_FRAME_LEN];
	int i;
	size_t k;

	for (i = request + 1; i < job; i++) {
		task_frame_function(r, i, func, sizeof(func));
		for (k = 0; k < ARRAY_SIZE(request_callers); k++)
			if (!strcmp(func, request_callers[k]))
				return i;
	}
	return request + 1 < job ? request + 1 : -1;
}

/* "async job ma_job_fn [ma_request] in kworker/u4:1 (pid 25)" */
static void add_requester(struct line *l, const struct task_stack *r)
{
	int job = task_stack_find(r, "async_run_entry_fn") - 1;
	int request = task_stack_find(r, "__request_module");
	int caller = request_caller(r, request, job);

	add(l, "async job ");
	if (job >= 0) {
		add_frame(l, r, job);
		add(l, " in ");
	}
	add_task(l, r);
	/* Who called request_module(), if not the job itself. */
	if (caller >= 0) {
		add(l, " -> ");
		add_frame(l, r, caller);
	}
}

/* "modprobe (pid 127) -> do_init_module -> async_synchronize_..." */
static void add_loader(struct line *l, const struct task_stack *m)
{
	char func[TASK_FRAME_LEN];

	task_frame_function(m, task_stack_find(m, "async_synchronize*"), func,
			    sizeof(func));
	add_task(l, m);
	add(l, " -> do_init_module -> %s", func);
}

/* "modprobe (pid 130) -> load_module waits for ma_hold's load" */
static void add_waiter(struct line *l, const struct task_stack *w,
		       const char *target)
{
	add_task(l, w);
	add(l, " -> ");
	if (w->nr_frames)
		add_frame(l, w, 0);
	else
		add(l, "?");
	add(l, " waits for %s's load", target);
}

static void add_seen(struct line *l, const struct task_set *set)
{
	unsigned int i, shown = 0;

	for (i = 0; i < set->nr; i++) {
		const struct task_stack *t = &set->tasks[i];

		if (!waitfor_involved(t))
			continue;
		if (shown++ == WAITFOR_SEEN_MAX) {
			add(l, "; ...");
			break;
		}
		add(l, "%s", shown > 1 ? "; " : "");
		add_task(l, t);
		if (t->nr_frames) {
			add(l, " in ");
			add_frame(l, t, 0);
		}
	}
	if (!shown)
		add(l, "no task of module loading or async work is blocked");
}

bool waitfor_cycle(const struct task_set *set, char *buf, size_t len)
{
	const struct task_stack *r, *m, *w;
	struct line l = { buf, len, 0 };
	char target[TASK_COMM_LEN];

	if (len)
		buf[0] = '\0';
	r = find_task(set, is_async_requester);
	m = find_helper_loader(set);
	w = find_task(set, is_waiting_helper);
	if (r && m && is_usermode_helper(m)) {
		loader_target(m, target, sizeof(target));
		add_requester(&l, r);
		add(&l, " -> request_module(%s) -> ", target);
		add_loader(&l, m);
		add(&l, " -> waits for the async job in ");
		add_task(&l, r);
		return true;
	}
	/*
	 * The request's modprobe waits for a load of its module under way,
	 * and the one task in do_init_module() waits for async work: that
	 * load, of the module requested while its init ran.
	 */
	if (r && m && w && count_tasks(set, is_in_init) == 1) {
		loader_target(w, target, sizeof(target));
		add_requester(&l, r);
		add(&l, " -> request_module(%s) -> ", target);
		add_waiter(&l, w, target);
		add(&l, " -> ");
		add_loader(&l, m);
		add(&l, " -> waits for the async job in ");
		add_task(&l, r);
		return true;
	}

	add(&l, "none seen: ");
	if (r && m) {
		add_loader(&l, m);
		add(&l, " waits for async work, but was not started by request_module()");
		add(&l, " (parent: %s)",
		    m->parent_comm[0] ? m->parent_comm : "unknown");
	} else if (r) {
		add_requester(&l, r);
		add(&l, " waits in request_module(), but no module loader waits for async work");
	} else if (m) {
		add_loader(&l, m);
		add(&l, " waits for async work, but no async job waits in request_module()");
	} else {
		add_seen(&l, set);
	}
	return false;
}

bool waitfor_wedge(const struct task_set *set, char *buf, size_t len,
		   int *pid)
{
	const struct task_stack *t = NULL;
	struct line l = { buf, len, 0 };
	unsigned int i;

	for (i = 0; i < set->nr && !t; i++)
		if (task_stack_find(&set->tasks[i], "async_synchronize_*") >= 0)
			t = &set->tasks[i];
	*pid = t ? t->pid : 0;
	if (waitfor_cycle(set, buf, len))
		return true;
	if (!t)
		return false;
	add_task(&l, t);
	add(&l, " blocked in ");
	add_frame(&l, t, task_stack_find(t, "async_synchronize_*"));
	return false;
}
