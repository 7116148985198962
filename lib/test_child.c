// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of lib/child.c, the watchdog: children that really return,
 * hang, crash, exit without a report and outlive a timeout.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "child.h"
#include "diag.h"
#include "test_util.h"

static void child_returns(void *arg, struct child_report *report)
{
	report->ret = 42;
	report->has_value = true;
	report->value = 7;
}

static void child_crashes(void *arg, struct child_report *report)
{
	abort();
}

static void child_exits_without_report(void *arg, struct child_report *report)
{
	_exit(3);
}

/* Blocks until SIGUSR1, which the parent blocked before the fork. */
static void child_waits_for_sigusr1(void *arg, struct child_report *report)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	report->ret = sigwait(&set, &sig) ? -1 : sig;
}

TEST(child_that_returns_gives_its_report)
{
	struct child c;

	ASSERT_EQ(0, child_start(&c, child_returns, NULL));
	ASSERT_EQ(CHILD_REPORTED, child_wait(&c, 5000));
	EXPECT_EQ(42, c.report.ret);
	EXPECT_TRUE(c.report.has_value);
	EXPECT_EQ(7, c.report.value);
	EXPECT_TRUE(c.reaped);
	EXPECT_GE(child_elapsed_us(&c), 0);
	EXPECT_EQ(-1, kill(c.pid, 0));	/* reaped: gone */
}

TEST(child_that_hangs_times_out_within_the_bound)
{
	struct child c;
	long long t0;
	int ms;

	diag_set_hook(capture_diag);
	ASSERT_EQ(0, child_start(&c, child_hangs, NULL));
	t0 = now_us();
	ASSERT_EQ(CHILD_RUNNING, child_wait(&c, 200));
	ms = elapsed_ms(t0);
	EXPECT_GE(ms, 200);
	EXPECT_LT(ms, 200 + SLACK_MS);

	/* The timeout report names the child and its state. */
	child_describe(&c, "hanging child");
	EXPECT_NE(NULL, strstr(captured, "hanging child: pid"));
	EXPECT_NE(NULL, strstr(captured, "state S"));

	/* Abandoning it kills and reaps it. */
	EXPECT_EQ(0, child_abandon(&c, 5000));
	EXPECT_EQ(-1, kill(c.pid, 0));
	EXPECT_EQ(ESRCH, errno);
	EXPECT_TRUE(WIFSIGNALED(c.wait_status));
	EXPECT_EQ(SIGKILL, WTERMSIG(c.wait_status));
}

TEST(child_that_crashes_is_an_error)
{
	struct child c;

	ASSERT_EQ(0, child_start(&c, child_crashes, NULL));
	ASSERT_EQ(CHILD_DIED, child_wait(&c, 5000));
	EXPECT_TRUE(WIFSIGNALED(c.wait_status));
	EXPECT_EQ(SIGABRT, WTERMSIG(c.wait_status));
	EXPECT_EQ(-1, child_elapsed_us(&c));
}

TEST(child_that_exits_without_a_report_is_an_error)
{
	struct child c;

	ASSERT_EQ(0, child_start(&c, child_exits_without_report, NULL));
	ASSERT_EQ(CHILD_DIED, child_wait(&c, 5000));
	EXPECT_TRUE(WIFEXITED(c.wait_status));
	EXPECT_EQ(3, WEXITSTATUS(c.wait_status));
}

TEST(child_can_be_waited_for_again_after_a_timeout)
{
	sigset_t set, old;
	struct child c;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	ASSERT_EQ(0, sigprocmask(SIG_BLOCK, &set, &old));
	ASSERT_EQ(0, child_start(&c, child_waits_for_sigusr1, NULL));
	ASSERT_EQ(0, sigprocmask(SIG_SETMASK, &old, NULL));

	/* Held: the wait times out and leaves it running. */
	ASSERT_EQ(CHILD_RUNNING, child_wait(&c, 50));
	EXPECT_EQ(0, kill(c.pid, 0));

	/* Released: the next wait sees its report. */
	ASSERT_EQ(0, kill(c.pid, SIGUSR1));
	ASSERT_EQ(CHILD_REPORTED, child_wait(&c, 5000));
	EXPECT_EQ(SIGUSR1, c.report.ret);
}

TEST(child_does_not_print_what_the_parent_buffered)
{
	char buf[64] = "";
	int fds[2], saved;
	struct child c;
	ssize_t n;

	/* Parent's stdout into a pipe, with a line left in stdio's buffer. */
	ASSERT_EQ(0, pipe(fds));
	saved = dup(STDOUT_FILENO);
	ASSERT_EQ(STDOUT_FILENO, dup2(fds[1], STDOUT_FILENO));
	setvbuf(stdout, NULL, _IOFBF, BUFSIZ);
	printf("once\n");
	ASSERT_EQ(0, child_start(&c, child_returns, NULL));
	ASSERT_EQ(CHILD_REPORTED, child_wait(&c, 5000));
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(fds[1]);
	n = read(fds[0], buf, sizeof(buf) - 1);
	ASSERT_GT(n, 0);
	EXPECT_STREQ("once\n", buf);
}

TEST(child_does_not_hold_stdout)
{
	char path[64], target[PATH_MAX] = "";
	long long deadline;
	struct child c;
	ssize_t n;

	ASSERT_EQ(0, child_start(&c, child_hangs, NULL));
	snprintf(path, sizeof(path), "/proc/%d/fd/1", c.pid);
	/* The child redirects it after the fork: give it a moment. */
	deadline = now_us() + 5000 * 1000LL;
	do {
		n = readlink(path, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = '\0';
		if (!strcmp(target, "/dev/null"))
			break;
		sleep_ms(1);
	} while (now_us() < deadline);
	EXPECT_STREQ("/dev/null", target);
	EXPECT_EQ(0, child_abandon(&c, 5000));
}

TEST(child_dies_with_its_parent)
{
	long long deadline;
	int fds[2], status;
	struct child c;
	pid_t parent, orphan = 0;
	char state;

	ASSERT_EQ(0, pipe(fds));
	parent = fork();
	ASSERT_GE(parent, 0);
	if (!parent) {
		if (child_start(&c, child_hangs, NULL))
			_exit(1);
		/* Past its set-up, in pause(), before its parent goes. */
		deadline = now_us() + 5000 * 1000LL;
		while (task_state(c.pid) != 'S' && now_us() < deadline)
			sleep_ms(1);
		if (write(fds[1], &c.pid, sizeof(c.pid)) != sizeof(c.pid))
			_exit(1);
		_exit(0);	/* without waiting for it */
	}
	close(fds[1]);
	ASSERT_EQ(sizeof(orphan), read(fds[0], &orphan, sizeof(orphan)));
	close(fds[0]);
	ASSERT_EQ(parent, waitpid(parent, &status, 0));

	deadline = now_us() + 5000 * 1000LL;
	do {
		state = task_state(orphan);
		if (!state || state == 'Z')
			break;
		sleep_ms(1);
	} while (now_us() < deadline);
	EXPECT_TRUE(!state || state == 'Z');
	if (state && state != 'Z')
		kill(orphan, SIGKILL);
}

TEST_HARNESS_MAIN
