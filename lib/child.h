/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A function run in a child process under a watchdog.
 *
 * Loading or unloading a module can block for good: a load that deadlocks in
 * do_init_module() sleeps in TASK_UNINTERRUPTIBLE and cannot even be killed.
 * So the library never makes such a call in the runner's own process: it
 * forks a child that makes the call and writes a report down a pipe, and the
 * runner waits for the report with a bound (poll(2) on the pipe). A child
 * that overruns the bound is left running, not waited for: the caller can
 * look at it (child_describe()), wait again later (after opening a gate, for
 * instance) or give up on it (child_abandon()).
 *
 * A child's stdin and stdout are /dev/null (a child stuck in the kernel must
 * not hold the runner's KTAP stream open), its stderr is the runner's, and
 * it is killed when the runner dies (PR_SET_PDEATHSIG), if it can be.
 */
#ifndef MA_CHILD_H
#define MA_CHILD_H

#include <stdbool.h>
#include <sys/types.h>

/* What the child's function tells the parent. */
struct child_report {
	int ret;		/* return value of the call */
	int err;		/* errno after the call, if ret < 0 */
	long long end_us;	/* now_us() when the call returned */
	bool has_value;		/* value below is valid */
	long value;		/* one extra value, read right after the call */
};

enum child_status {
	CHILD_RUNNING,		/* no report yet: the bound expired */
	CHILD_REPORTED,		/* report received, child reaped */
	CHILD_DIED,		/* exited or was killed without a report */
	CHILD_ERROR,		/* could not be started or watched */
};

struct child {
	pid_t pid;
	int report_fd;		/* read end of the report pipe, -1 if closed */
	long long start_us;	/* now_us() before the fork */
	enum child_status status;
	int wait_status;	/* waitpid() status once reaped */
	bool reaped;
	struct child_report report;
};

/* Runs in the child; fills @report. Must not print to stdout. */
typedef void (*child_fn)(void *arg, struct child_report *report);

/* Fork a child that runs @fn(@arg); returns 0 or -errno. */
int child_start(struct child *c, child_fn fn, void *arg);

/* Wait up to @timeout_ms for the child's report (or death). */
enum child_status child_wait(struct child *c, int timeout_ms);

/* Log the child's pid, state and kernel stack as diagnostic lines. */
void child_describe(const struct child *c, const char *what);

/*
 * SIGKILL the child and reap it if it dies within @timeout_ms. Returns 0 if
 * reaped, -EBUSY if it is still there (sleeping uninterruptibly in the
 * kernel): it stays a child of ours and is then left to init.
 */
int child_abandon(struct child *c, int timeout_ms);

/* Microseconds from the fork to the call's return, or -1 if no report. */
long long child_elapsed_us(const struct child *c);

const char *child_status_name(enum child_status status);

#endif /* MA_CHILD_H */
