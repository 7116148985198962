// SPDX-License-Identifier: GPL-2.0
/*
 * A function run in a child process under a watchdog (see child.h).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "diag.h"
#include "tasks.h"

/* How long a child that has reported or hung up may take to exit. */
#define CHILD_EXIT_MS		1000
#define CHILD_REAP_STEP_MS	1

/*
 * close_range() (5.9) and pidfd_open() (5.3), by number: the C library may
 * have no wrapper. Where its headers do not name them they are not called
 * (-1: the fallbacks below run): their numbers are not the generic
 * table's everywhere (alpha, ia64 and MIPS have their own), never guessed.
 */
static long sys_close_range(unsigned int first, unsigned int last)
{
#ifdef __NR_close_range
	return syscall(__NR_close_range, first, last, 0);
#else
	return -1;
#endif
}

static int sys_pidfd_open(pid_t pid)
{
#ifdef __NR_pidfd_open
	return syscall(__NR_pidfd_open, pid, 0);
#else
	return -1;
#endif
}

/*
 * The child keeps only stdin, stdout, stderr and its end of the pipe. Any
 * other descriptor it inherited, the write end of another child's pipe in
 * particular, would keep that pipe open and hide the other child's death.
 */
static void close_other_fds(int keep)
{
	struct dirent *de;
	DIR *dir;
	int fd;

	if ((keep == 3 || !sys_close_range(3, keep - 1)) &&
	    !sys_close_range(keep + 1, ~0U))
		return;

	/* Kernels before 5.9: close what /proc/self/fd lists. */
	dir = opendir("/proc/self/fd");
	if (!dir)
		return;
	while ((de = readdir(dir))) {
		fd = atoi(de->d_name);
		if (fd > 2 && fd != keep && fd != dirfd(dir))
			close(fd);
	}
	closedir(dir);
}

static void child_main(int report_fd, pid_t parent, child_fn fn, void *arg)
{
	struct child_report report = { 0 };
	int null;
	const char *p = (const char *)&report;
	size_t left = sizeof(report);
	ssize_t n;

	close_other_fds(report_fd);
	/* The runner's handlers put its knobs back: not a child's to do. */
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);

	/*
	 * Not one byte of the runner's KTAP on stdout comes from a child, and
	 * a child stuck in the kernel must not keep stdout open for whoever
	 * reads it to its end (the guest's init does). Nor must a child
	 * outlive the runner that watches it, where it can be killed at all.
	 */
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		close(null);
	}
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(125);	/* the parent died before prctl() */

	fn(arg, &report);
	if (!report.end_us)
		report.end_us = now_us();
	while (left) {
		n = write(report_fd, p, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(126);
		p += n;
		left -= n;
	}
	_exit(0);
}

int child_start(struct child *c, child_fn fn, void *arg)
{
	pid_t parent = getpid();
	int fds[2];

	memset(c, 0, sizeof(*c));
	c->report_fd = -1;
	c->status = CHILD_ERROR;

	if (pipe2(fds, O_CLOEXEC))
		return -errno;

	/* Nothing buffered may be printed twice, by parent and child. */
	fflush(stdout);
	fflush(stderr);

	c->start_us = now_us();
	c->pid = fork();
	if (c->pid < 0) {
		int err = -errno;

		close(fds[0]);
		close(fds[1]);
		return err;
	}
	if (c->pid == 0) {
		close(fds[0]);
		child_main(fds[1], parent, fn, arg);
	}
	close(fds[1]);
	c->report_fd = fds[0];
	c->status = CHILD_RUNNING;
	return 0;
}

/*
 * Reap the child within @timeout_ms; true if it was reaped. A child that
 * has just reported is still on its way out: its pidfd (5.3 and later)
 * says when it has exited, where a poll of waitpid() would sleep a step.
 */
static bool child_reap(struct child *c, int timeout_ms)
{
	long long deadline = now_us() + timeout_ms * 1000LL;
	struct pollfd pfd = { .events = POLLIN };
	pid_t pid;

	if (c->reaped)
		return true;
	pfd.fd = sys_pidfd_open(c->pid);
	if (pfd.fd >= 0) {
		poll(&pfd, 1, timeout_ms);
		close(pfd.fd);
	}
	for (;;) {
		pid = waitpid(c->pid, &c->wait_status, WNOHANG);
		if (pid == c->pid || (pid < 0 && errno == ECHILD)) {
			c->reaped = true;
			return true;
		}
		if (now_us() >= deadline)
			return false;
		sleep_ms(CHILD_REAP_STEP_MS);
	}
}

static void child_close_pipe(struct child *c)
{
	if (c->report_fd >= 0)
		close(c->report_fd);
	c->report_fd = -1;
}

/*
 * Read the report, or the end of file a child that dies without one leaves
 * behind. Returns the new status, or CHILD_RUNNING if nothing was there.
 */
static enum child_status child_collect(struct child *c)
{
	ssize_t n;

	n = read(c->report_fd, &c->report, sizeof(c->report));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return CHILD_RUNNING;

	child_close_pipe(c);
	if (!child_reap(c, CHILD_EXIT_MS))
		diag("child %d: exit not seen within %d ms", c->pid,
		     CHILD_EXIT_MS);
	if (n == sizeof(c->report))
		return CHILD_REPORTED;
	memset(&c->report, 0, sizeof(c->report));
	return CHILD_DIED;
}

enum child_status child_wait(struct child *c, int timeout_ms)
{
	long long deadline = now_us() + timeout_ms * 1000LL;
	struct pollfd pfd;
	int ret;

	if (c->status != CHILD_RUNNING)
		return c->status;

	pfd.fd = c->report_fd;
	pfd.events = POLLIN;
	for (;;) {
		long long left_ms = (deadline - now_us() + 999) / 1000;

		if (left_ms < 0)
			left_ms = 0;
		ret = poll(&pfd, 1, left_ms);
		if (ret < 0 && errno != EINTR) {
			c->status = CHILD_ERROR;
			return c->status;
		}
		if (ret > 0) {
			c->status = child_collect(c);
			if (c->status != CHILD_RUNNING)
				return c->status;
		}
		if (now_us() >= deadline)
			return CHILD_RUNNING;
	}
}

void child_describe(const struct child *c, const char *what)
{
	diag("%s: pid %d, %s after %lld ms", what, c->pid,
	     child_status_name(c->status), (now_us() - c->start_us) / 1000);
	if (c->status == CHILD_RUNNING)
		task_dump(c->pid);
}

int child_abandon(struct child *c, int timeout_ms)
{
	if (c->status != CHILD_RUNNING)
		return 0;
	kill(c->pid, SIGKILL);
	if (child_wait(c, timeout_ms) != CHILD_RUNNING)
		return 0;
	diag("child %d did not die on SIGKILL within %d ms: left behind",
	     c->pid, timeout_ms);
	child_close_pipe(c);
	c->status = CHILD_ERROR;
	return -EBUSY;
}

long long child_elapsed_us(const struct child *c)
{
	if (c->status != CHILD_REPORTED)
		return -1;
	return c->report.end_us - c->start_us;
}

const char *child_status_name(enum child_status status)
{
	switch (status) {
	case CHILD_RUNNING:
		return "still running";
	case CHILD_REPORTED:
		return "returned";
	case CHILD_DIED:
		return "died without a report";
	case CHILD_ERROR:
	default:
		return "not watched";
	}
}
