/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tasks as /proc shows them: state and kernel stack, for the evidence of a
 * load or an async job that does not come back.
 *
 * A struct task_stack holds one task's kernel stack as frames
 * ("__request_module+0x1a5/0x3e0", "ma_job_fn+0xa3/0xf0 [ma_request]"),
 * innermost first, from /proc/<pid>/stack or from a dump the kernel logged
 * (sysrq.h). Frames that say nothing about who waits for whom are left out
 * and counted: the scheduler's own (/proc/<pid>/stack omits them, the
 * kernel's dumps do not), the kernel's entry code, the workqueue and kthread
 * machinery under every kworker, unreliable "? " frames, and a frame that
 * repeats the one before it.
 */
#ifndef MA_TASKS_H
#define MA_TASKS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Set the /proc directory to read (tests); NULL restores "/proc". */
void tasks_set_proc_root(const char *dir);

/* The state letter of @pid ('R', 'S', 'D', 'Z', ...), or 0 if unknown. */
char task_state(pid_t pid);

/*
 * How many times @pid has gone to sleep (/proc/<pid>/status,
 * voluntary_ctxt_switches) into *@n: a sleeping task woken that sleeps
 * again has counted one more. 0 or -errno.
 */
int task_sleeps(pid_t pid, long *n);

/* Read the command name of @pid into @buf; returns 0 or -errno. */
int task_comm(pid_t pid, char *buf, size_t len);

/* Log "task <pid> (<comm>) state <S>" and its kernel stack. */
void task_dump(pid_t pid);

/* Log every task in uninterruptible sleep (D); returns how many. */
int tasks_dump_blocked(void);

/* How many tasks are named @comm (modprobe, say), alive or not reaped. */
int tasks_named(const char *comm);

#define TASK_COMM_LEN		64
#define TASK_CMDLINE_LEN	128
#define TASK_FRAMES_MAX		16	/* a stuck load's stack, trimmed */
#define TASK_FRAME_LEN		96
#define TASK_SET_MAX		16

struct task_stack {
	int pid;
	int ppid;			/* 0 if unknown */
	char state;			/* 'D', 'S', ...; 0 if unknown */
	char comm[TASK_COMM_LEN];
	char parent_comm[TASK_COMM_LEN];	/* "" if unknown */
	char cmdline[TASK_CMDLINE_LEN];	/* argv joined by spaces, or "" */
	bool has_stack;			/* frames were read (may be none) */
	unsigned int nr_frames;
	unsigned int nr_trimmed;	/* frames left out as generic */
	unsigned int nr_dropped;	/* frames beyond TASK_FRAMES_MAX */
	char frames[TASK_FRAMES_MAX][TASK_FRAME_LEN];
};

struct task_set {
	unsigned int nr;
	unsigned int nr_more;		/* tasks that did not fit */
	struct task_stack tasks[TASK_SET_MAX];
};

/*
 * Add one line of a stack ("[<0>] f+0x1/0x2", " f+0x1/0x2 [mod]",
 * " ? f+0x1/0x2") to @t, or count it as trimmed. Returns false if the line
 * is no frame at all.
 */
bool task_stack_add(struct task_stack *t, const char *line);

/* The function of frame @i ("f" of "f+0x1/0x2 [mod]") into @buf. */
void task_frame_function(const struct task_stack *t, unsigned int i,
			 char *buf, size_t len);

/*
 * Index of the innermost frame whose function is @func, or -1. A @func
 * ending in '*' matches every function that starts with the rest.
 */
int task_stack_find(const struct task_stack *t, const char *func);

/*
 * Read @pid's name, state, parent and kernel stack from /proc; with
 * @cmdline also its command line (it takes the task's mm lock for a moment:
 * only for tasks that sleep in a system call, not in a page fault).
 */
int task_read(int pid, struct task_stack *t, bool cmdline);

/*
 * Is @t asleep interruptibly (S) in a module load's system call, where it
 * waits for a load of the same module under way?
 */
bool task_waits_for_a_load(const struct task_stack *t);

/*
 * Read every task in uninterruptible sleep (D), and every one that
 * task_waits_for_a_load(), into @set; returns how many.
 */
int tasks_read_blocked(struct task_set *set);

/* The task of @set with @pid, or NULL. */
struct task_stack *task_set_find(struct task_set *set, int pid);

/* Add a copy of @t to @set (counted in nr_more if full); returns it or NULL. */
struct task_stack *task_set_add(struct task_set *set,
				const struct task_stack *t);

/* Log "<comm> (pid N) state D" and the kept frames, indented by @indent. */
void task_stack_report(const struct task_stack *t, const char *indent);

/*
 * How the kernel shows where a task sleeps: its kernel stack
 * (/proc/<pid>/stack: root, CONFIG_STACKTRACE), else the function it
 * sleeps in (/proc/<pid>/wchan: CONFIG_KALLSYMS), else not at all.
 */
enum task_view {
	TASK_VIEW_NONE,
	TASK_VIEW_WCHAN,
	TASK_VIEW_STACK,
};

/* What this kernel shows, tried on kthreadd (pid 2), which always sleeps. */
enum task_view tasks_view(void);

/* "/proc/<pid>/stack", "/proc/<pid>/wchan", "no view" */
const char *task_view_name(enum task_view view);

/*
 * Does @pid sleep uninterruptibly in @func (a pattern as
 * task_stack_find()'s), as @view shows it: anywhere on its stack, or as its
 * wchan? 1 yes, 0 no (also when it is not in state D), -errno if it cannot
 * be read.
 */
int task_waits_in(int pid, const char *func, enum task_view view);

#endif /* MA_TASKS_H */
