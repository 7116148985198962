// SPDX-License-Identifier: GPL-2.0
/*
 * Tasks as /proc shows them (see tasks.h).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "tasks.h"

/* A stuck load's stack is a dozen frames; a runaway one is cut short. */
#define TASK_STACK_MAX_LINES	32

static const char *proc_root = "/proc";

void tasks_set_proc_root(const char *dir)
{
	proc_root = dir ? dir : "/proc";
}

static FILE *task_open(pid_t pid, const char *file)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%d/%s", proc_root, (int)pid, file);
	return fopen(path, "re");
}

/* /proc/<pid>/stat: "pid (comm) S ppid ...", comm may contain ' ' and ')'. */
static int task_stat_ppid(pid_t pid, char *comm, size_t len, char *state,
			  int *ppid)
{
	char buf[512], *open, *close;
	FILE *f;
	size_t n;

	f = task_open(pid, "stat");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';

	open = strchr(buf, '(');
	close = strrchr(buf, ')');
	if (!open || !close || close < open || close[1] != ' ' || !close[2])
		return -EINVAL;
	if (comm) {
		*close = '\0';
		snprintf(comm, len, "%s", open + 1);
	}
	if (state)
		*state = close[2];
	if (ppid && sscanf(close + 3, " %d", ppid) != 1)
		*ppid = 0;
	return 0;
}

static int task_stat(pid_t pid, char *comm, size_t len, char *state)
{
	return task_stat_ppid(pid, comm, len, state, NULL);
}

char task_state(pid_t pid)
{
	char state;

	if (task_stat(pid, NULL, 0, &state))
		return 0;
	return state;
}

int task_sleeps(pid_t pid, long *n)
{
	char line[128];
	int ret = -ENOENT;
	FILE *f;

	f = task_open(pid, "status");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "voluntary_ctxt_switches: %ld", n) == 1) {
			ret = 0;
			break;
		}
	fclose(f);
	return ret;
}

int task_comm(pid_t pid, char *buf, size_t len)
{
	return task_stat(pid, buf, len, NULL);
}

void task_dump(pid_t pid)
{
	char comm[64], state, line[256];
	int lines = 0;
	FILE *f;

	if (task_stat(pid, comm, sizeof(comm), &state)) {
		diag("task %d: gone", (int)pid);
		return;
	}
	diag("task %d (%s) state %c", (int)pid, comm, state);

	f = task_open(pid, "stack");
	if (!f) {
		diag("  no kernel stack: %s", strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (++lines > TASK_STACK_MAX_LINES) {
			diag("  ...");
			break;
		}
		diag("  %s", line);
	}
	fclose(f);
}

int tasks_dump_blocked(void)
{
	struct dirent *de;
	int count = 0;
	DIR *dir;
	pid_t pid;

	dir = opendir(proc_root);
	if (!dir)
		return 0;
	while ((de = readdir(dir))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = atoi(de->d_name);
		if (task_state(pid) != 'D')
			continue;
		task_dump(pid);
		count++;
	}
	closedir(dir);
	return count;
}

int tasks_named(const char *comm)
{
	char name[TASK_COMM_LEN];
	struct dirent *de;
	int count = 0;
	DIR *dir;

	dir = opendir(proc_root);
	if (!dir)
		return 0;
	while ((de = readdir(dir))) {
		if (isdigit((unsigned char)de->d_name[0]) &&
		    !task_comm(atoi(de->d_name), name, sizeof(name)) &&
		    !strcmp(name, comm))
			count++;
	}
	closedir(dir);
	return count;
}

/* ---- stacks as frames --------------------------------------------------- */

/*
 * Functions that say nothing about who waits for whom: the scheduler's
 * (the kernel's dumps show them, /proc/<pid>/stack does not), the system
 * call entry, and the machinery under every kworker and kthread. A '*' at
 * the end matches any function that starts with the rest.
 */
static const char * const generic_functions[] = {
	"__schedule", "schedule", "schedule_*", "io_schedule*",
	"__wait_for_common", "wait_for_common*", "do_wait_for_common",
	"wait_for_completion*",
	"process_one_work", "worker_thread", "kthread", "ret_from_fork*",
	"do_syscall_64", "entry_SYSCALL_64*", "__x64_sys_*",
	"syscall_exit_to_user_mode*", "exit_to_user_mode*",
};

static bool function_matches(const char *func, const char *pattern)
{
	size_t n = strlen(pattern);

	if (n && pattern[n - 1] == '*')
		return !strncmp(func, pattern, n - 1);
	return !strcmp(func, pattern);
}

static bool function_is_generic(const char *func)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(generic_functions); i++)
		if (function_matches(func, generic_functions[i]))
			return true;
	return false;
}

/* "f+0x1/0x2 [mod]" -> "f" */
static void frame_function(const char *frame, char *buf, size_t len)
{
	size_t n = strcspn(frame, "+ ");

	if (n >= len)
		n = len - 1;
	memcpy(buf, frame, n);
	buf[n] = '\0';
}

bool task_stack_add(struct task_stack *t, const char *line)
{
	char func[TASK_FRAME_LEN], last[TASK_FRAME_LEN];
	const char *p = line;
	bool unreliable = false;
	size_t n;

	while (*p == ' ' || *p == '\t')
		p++;
	if (!strncmp(p, "[<", 2)) {	/* /proc/<pid>/stack: "[<0>] f+..." */
		p = strstr(p, "] ");
		if (!p)
			return false;
		p += 2;
	}
	if (!strncmp(p, "? ", 2)) {	/* the unwinder's guess */
		unreliable = true;
		p += 2;
	}
	/* A frame is "f+0x1/0x2", maybe followed by " [mod]". */
	n = strcspn(p, "\n ");
	if (!n || !memmem(p, n, "+0x", 3) || !memmem(p, n, "/0x", 3))
		return false;

	t->has_stack = true;
	frame_function(p, func, sizeof(func));
	if (t->nr_frames)
		task_frame_function(t, t->nr_frames - 1, last, sizeof(last));
	if (unreliable || function_is_generic(func) ||
	    (t->nr_frames && !strcmp(func, last))) {
		t->nr_trimmed++;
		return true;
	}
	if (t->nr_frames == TASK_FRAMES_MAX) {
		t->nr_dropped++;
		return true;
	}
	snprintf(t->frames[t->nr_frames], TASK_FRAME_LEN, "%.*s",
		 (int)strcspn(p, "\n"), p);
	t->nr_frames++;
	return true;
}

void task_frame_function(const struct task_stack *t, unsigned int i,
			 char *buf, size_t len)
{
	if (i >= t->nr_frames) {
		if (len)
			buf[0] = '\0';
		return;
	}
	frame_function(t->frames[i], buf, len);
}

int task_stack_find(const struct task_stack *t, const char *func)
{
	char name[TASK_FRAME_LEN];
	unsigned int i;

	for (i = 0; i < t->nr_frames; i++) {
		task_frame_function(t, i, name, sizeof(name));
		if (function_matches(name, func))
			return i;
	}
	return -1;
}

static void task_read_cmdline(int pid, struct task_stack *t)
{
	FILE *f = task_open(pid, "cmdline");
	size_t n, i;

	if (!f)
		return;
	n = fread(t->cmdline, 1, sizeof(t->cmdline) - 1, f);
	fclose(f);
	while (n && !t->cmdline[n - 1])
		n--;
	for (i = 0; i < n; i++)
		if (!t->cmdline[i])
			t->cmdline[i] = ' ';
	t->cmdline[n] = '\0';
}

int task_read(int pid, struct task_stack *t, bool cmdline)
{
	char line[256];
	FILE *f;
	int ret;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	ret = task_stat_ppid(pid, t->comm, sizeof(t->comm), &t->state,
			     &t->ppid);
	if (ret)
		return ret;
	if (t->ppid > 0)
		task_comm(t->ppid, t->parent_comm, sizeof(t->parent_comm));
	f = task_open(pid, "stack");
	if (f) {
		t->has_stack = true;
		while (fgets(line, sizeof(line), f))
			task_stack_add(t, line);
		fclose(f);
	}
	if (cmdline)
		task_read_cmdline(pid, t);
	return 0;
}

/*
 * A task that sleeps interruptibly (S) in a module load's system call waits
 * for the load of the same module under way: 5.10 and 6.1 in
 * add_unformed_module() (wait_event_interruptible(module_wq)), 7.2 in
 * module_patient_check_exists() (the same wait), or in
 * idempotent_wait_for_completion() when the same file is loaded. Those
 * may be inlined into load_module() or __do_sys_finit_module().
 */
static const char * const load_syscall_functions[] = {
	"load_module", "__do_sys_finit_module", "__do_sys_init_module",
	"idempotent_*",
};

bool task_waits_for_a_load(const struct task_stack *t)
{
	size_t i;

	if (t->state != 'S')
		return false;
	for (i = 0; i < ARRAY_SIZE(load_syscall_functions); i++)
		if (task_stack_find(t, load_syscall_functions[i]) >= 0)
			return true;
	return false;
}

/* Tasks that sleep in module loading: their command line names the module. */
static bool task_loads_a_module(const struct task_stack *t)
{
	return task_stack_find(t, "do_init_module") >= 0 ||
	       task_stack_find(t, "load_module") >= 0 ||
	       task_waits_for_a_load(t);
}

int tasks_read_blocked(struct task_set *set)
{
	static struct task_stack t;
	struct dirent *de;
	DIR *dir;
	char state;
	int pid;

	memset(set, 0, sizeof(*set));
	dir = opendir(proc_root);
	if (!dir)
		return 0;
	while ((de = readdir(dir))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = atoi(de->d_name);
		state = task_state(pid);
		if ((state != 'D' && state != 'S') || task_read(pid, &t, false))
			continue;
		if (state == 'S' && !task_waits_for_a_load(&t))
			continue;
		if (task_loads_a_module(&t))
			task_read_cmdline(pid, &t);
		task_set_add(set, &t);
	}
	closedir(dir);
	return set->nr + set->nr_more;
}

struct task_stack *task_set_find(struct task_set *set, int pid)
{
	unsigned int i;

	for (i = 0; i < set->nr; i++)
		if (set->tasks[i].pid == pid)
			return &set->tasks[i];
	return NULL;
}

struct task_stack *task_set_add(struct task_set *set,
				const struct task_stack *t)
{
	if (set->nr == TASK_SET_MAX) {
		set->nr_more++;
		return NULL;
	}
	set->tasks[set->nr] = *t;
	return &set->tasks[set->nr++];
}

void task_stack_report(const struct task_stack *t, const char *indent)
{
	unsigned int i;

	diag("%stask %d (%s) state %c%s%s%s", indent, t->pid, t->comm,
	     t->state ? t->state : '?', t->cmdline[0] ? ": " : "",
	     t->cmdline, t->has_stack ? "" : ", no kernel stack");
	for (i = 0; i < t->nr_frames; i++)
		diag("%s  %s", indent, t->frames[i]);
	if (t->nr_dropped)
		diag("%s  ... %u more frames", indent, t->nr_dropped);
}

/* ---- where a task sleeps ------------------------------------------------ */

#define KTHREADD_PID	2

const char *task_view_name(enum task_view view)
{
	switch (view) {
	case TASK_VIEW_STACK:
		return "/proc/<pid>/stack";
	case TASK_VIEW_WCHAN:
		return "/proc/<pid>/wchan";
	case TASK_VIEW_NONE:
	default:
		return "no view";
	}
}

/* @pid's wchan, a function name; "" if the kernel shows none ("0"). */
static int task_wchan(int pid, char *buf, size_t len)
{
	FILE *f = task_open(pid, "wchan");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (!strcmp(buf, "0"))
		buf[0] = '\0';
	return 0;
}

/*
 * Only a task asleep uninterruptibly ("D": wait_event() in every
 * generation's async_synchronize_*) can be blocked there: its state, a
 * cheap read, comes first, its stack (an unwind, under TCG a few ms that
 * slow a running load down) only then.
 */
int task_waits_in(int pid, const char *func, enum task_view view)
{
	static struct task_stack t;
	char wchan[TASK_FRAME_LEN], state;
	int ret;

	ret = task_stat(pid, NULL, 0, &state);
	if (ret)
		return ret;
	if (state != 'D')
		return 0;
	if (view == TASK_VIEW_STACK) {
		ret = task_read(pid, &t, false);
		if (ret)
			return ret;
		return task_stack_find(&t, func) >= 0;
	}
	if (view == TASK_VIEW_WCHAN) {
		ret = task_wchan(pid, wchan, sizeof(wchan));
		if (ret)
			return ret;
		return function_matches(wchan, func);
	}
	return -EOPNOTSUPP;
}

enum task_view tasks_view(void)
{
	static struct task_stack t;
	char wchan[TASK_FRAME_LEN];

	if (!task_read(KTHREADD_PID, &t, false) && t.nr_frames)
		return TASK_VIEW_STACK;
	if (!task_wchan(KTHREADD_PID, wchan, sizeof(wchan)) && wchan[0])
		return TASK_VIEW_WCHAN;
	return TASK_VIEW_NONE;
}
