// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the module_async library and of the runner's KTAP.
 *
 * They need no kernel module and load none: the watchdog really hangs,
 * crashes and releases children; the knob API runs against a temporary
 * directory standing in for /sys/module; the kernel log scanner reads
 * records from a SOCK_SEQPACKET socket, which like /dev/kmsg returns one
 * record per read; /proc is faked where a test needs a state it cannot
 * produce. The runner is run with its modules missing, and as an
 * unprivileged user, so that every case skips, and its output is parsed
 * back as KTAP. MODULE_ASYNC_RUNNER names the runner binary.
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
#include "kmsg.h"
#include "knob.h"
#include "ktap.h"
#include "module.h"
#include "sysrq.h"
#include "tasks.h"
#include "waitfor.h"

/* Slack for a loaded host: a bound must hold within this much. */
#define SLACK_MS	1000

/* ---- helpers ------------------------------------------------------------ */

static char captured[16384];

static void capture_diag(const char *line)
{
	size_t n = strlen(captured);

	snprintf(captured + n, sizeof(captured) - n, "%s\n", line);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
}

static char *make_temp_dir(void)
{
	char tmpl[] = "/tmp/ma_test_XXXXXX";
	char *dir = mkdtemp(tmpl);

	return dir ? strdup(dir) : NULL;
}

static void remove_tree(const char *dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
}

static long long elapsed_ms(long long since_us)
{
	return (now_us() - since_us) / 1000;
}

/* ---- child: the watchdog ------------------------------------------------ */

static void child_returns(void *arg, struct child_report *report)
{
	report->ret = 42;
	report->has_value = true;
	report->value = 7;
}

static void child_hangs(void *arg, struct child_report *report)
{
	for (;;)
		pause();
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

/* ---- knobs -------------------------------------------------------------- */

FIXTURE(knobs) {
	char *root;
	char path[PATH_MAX];
};

FIXTURE_SETUP(knobs)
{
	char dir[PATH_MAX / 2];

	self->root = make_temp_dir();
	ASSERT_NE(NULL, self->root);
	snprintf(dir, sizeof(dir), "%s/ma_fake", self->root);
	ASSERT_EQ(0, mkdir(dir, 0755));
	snprintf(dir, sizeof(dir), "%s/ma_fake/parameters", self->root);
	ASSERT_EQ(0, mkdir(dir, 0755));
	snprintf(self->path, sizeof(self->path), "%s/done", dir);
	write_file(self->path, "0\n");
	knob_set_root(self->root);
}

FIXTURE_TEARDOWN(knobs)
{
	knob_set_root(NULL);
	remove_tree(self->root);
	free(self->root);
}

TEST_F(knobs, path_is_under_the_root)
{
	char path[PATH_MAX];

	ASSERT_EQ(0, knob_path(path, sizeof(path), "ma_fake", "done"));
	EXPECT_STREQ(self->path, path);
	knob_set_root(NULL);
	ASSERT_EQ(0, knob_path(path, sizeof(path), "module", "async_probe"));
	EXPECT_STREQ("/sys/module/module/parameters/async_probe", path);
}

TEST_F(knobs, read_and_write)
{
	char buf[16];
	long value = -1;

	ASSERT_EQ(0, knob_read("ma_fake", "done", buf, sizeof(buf)));
	EXPECT_STREQ("0", buf);	/* newline stripped */
	ASSERT_EQ(0, knob_write("ma_fake", "done", "1"));
	ASSERT_EQ(0, knob_read_long("ma_fake", "done", &value));
	EXPECT_EQ(1, value);
	EXPECT_TRUE(knob_exists("ma_fake", "done"));
	EXPECT_TRUE(knob_exists("ma_fake", NULL));
	EXPECT_FALSE(knob_exists("ma_fake", "open"));
}

TEST_F(knobs, non_numbers_and_missing_knobs_are_errors)
{
	char buf[16];
	long value;

	write_file(self->path, "N\n");
	EXPECT_EQ(-EINVAL, knob_read_long("ma_fake", "done", &value));
	EXPECT_EQ(-ENOENT, knob_read("ma_fake", "open", buf, sizeof(buf)));
	EXPECT_EQ(-ENOENT, knob_write("ma_gone", "open", "1"));
}

TEST_F(knobs, wait_times_out_on_a_knob_that_never_changes)
{
	long last = 99;
	long long t0 = now_us();
	int ms;

	EXPECT_EQ(-ETIMEDOUT, knob_wait_long("ma_fake", "done", 1, 200, &last));
	ms = elapsed_ms(t0);
	EXPECT_GE(ms, 200);
	EXPECT_LT(ms, 200 + SLACK_MS);
	EXPECT_EQ(0, last);
}

TEST_F(knobs, wait_times_out_on_a_missing_knob)
{
	long last = 99;

	EXPECT_EQ(-ETIMEDOUT, knob_wait_long("ma_fake", "started", 1, 50,
					     &last));
	EXPECT_EQ(LONG_MIN, last);
}

TEST_F(knobs, wait_returns_when_the_knob_changes)
{
	long long t0;
	pid_t pid;
	int status;

	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		sleep_ms(100);
		write_file(self->path, "1\n");
		_exit(0);
	}
	t0 = now_us();
	EXPECT_EQ(0, knob_wait_long("ma_fake", "done", 1, 10000, NULL));
	EXPECT_LT(elapsed_ms(t0), 100 + SLACK_MS);
	waitpid(pid, &status, 0);
}

/* ---- the kernel log ----------------------------------------------------- */

FIXTURE(kmsg) {
	int fds[2];
	struct kmsg_scan scan;
};

FIXTURE_SETUP(kmsg)
{
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET, 0, self->fds));
	ASSERT_EQ(0, fcntl(self->fds[0], F_SETFL, O_NONBLOCK));
	kmsg_attach(&self->scan, self->fds[0]);
}

FIXTURE_TEARDOWN(kmsg)
{
	close(self->fds[0]);
	close(self->fds[1]);
}

static void send_record(int fd, const char *record)
{
	if (send(fd, record, strlen(record), 0) < 0)
		abort();
}

#define KMOD_WARNING \
	"WARNING: CPU: 1 PID: 57 at kernel/kmod.c:136 __request_module+0x2f/0x390"

TEST_F(kmsg, picks_warning_lines_out_of_records)
{
	send_record(self->fds[1], "6,100,1000,-;null_blk: module loaded\n");
	send_record(self->fds[1], "4,101,1001,-;------------[ cut here ]------------\n");
	send_record(self->fds[1], "4,102,1002,-;" KMOD_WARNING "\n");
	send_record(self->fds[1], "4,103,1003,-;Modules linked in: ma_request(O)\n");
	send_record(self->fds[1],
		    "4,104,1004,-;WARNING: CPU: 0 PID: 1 at mm/slab.c:9 f+0x1/0x2\n"
		    " SUBSYSTEM=cpu\n DEVICE=+cpu:0\n");
	kmsg_reset(&self->scan, "__request_module");

	EXPECT_EQ(5, kmsg_scan(&self->scan));
	EXPECT_EQ(5, self->scan.nr_records);
	EXPECT_EQ(2, self->scan.nr_warnings);
	EXPECT_EQ(1, self->scan.nr_matches);
	EXPECT_TRUE(self->scan.warning_matches);
	ASSERT_EQ(2, self->scan.nr_lines);
	EXPECT_STREQ(KMOD_WARNING, self->scan.lines[0]);
	/* The dictionary lines of a record are not part of its message. */
	EXPECT_STREQ("WARNING: CPU: 0 PID: 1 at mm/slab.c:9 f+0x1/0x2",
		     self->scan.lines[1]);
}

TEST_F(kmsg, a_warning_elsewhere_does_not_match_the_pattern)
{
	send_record(self->fds[1], "4,1,1,-;WARNING: CPU: 0 PID: 1 at a.c:1 f\n");
	send_record(self->fds[1], "6,2,2,-;a mention of __request_module\n");
	kmsg_reset(&self->scan, "__request_module");

	EXPECT_EQ(2, kmsg_scan(&self->scan));
	EXPECT_EQ(1, self->scan.nr_warnings);
	EXPECT_EQ(1, self->scan.nr_matches);
	EXPECT_FALSE(self->scan.warning_matches);
}

TEST_F(kmsg, keeps_lines_that_mention_the_pattern)
{
	send_record(self->fds[1], "4,1,1,-; ma_job_fn+0x1a/0x40 [ma_request]\n");
	send_record(self->fds[1], "4,2,2,-; async_run_entry_fn+0x30/0x130\n");
	kmsg_reset(&self->scan, "[ma_");

	EXPECT_EQ(2, kmsg_scan(&self->scan));
	EXPECT_EQ(0, self->scan.nr_warnings);
	ASSERT_EQ(1, self->scan.nr_lines);
	EXPECT_STREQ(" ma_job_fn+0x1a/0x40 [ma_request]", self->scan.lines[0]);
}

TEST_F(kmsg, ignores_records_without_a_header)
{
	send_record(self->fds[1], "WARNING: no header here\n");
	kmsg_reset(&self->scan, NULL);

	EXPECT_EQ(1, kmsg_scan(&self->scan));
	EXPECT_EQ(0, self->scan.nr_records);
	EXPECT_EQ(0, self->scan.nr_warnings);
}

TEST_F(kmsg, keeps_a_bounded_number_of_lines)
{
	char record[128];
	int i;

	for (i = 0; i < KMSG_MAX_LINES + 8; i++) {
		snprintf(record, sizeof(record),
			 "4,%d,%d,-;WARNING: CPU: 0 PID: %d at x.c:1 f\n",
			 i, i, i);
		send_record(self->fds[1], record);
	}
	kmsg_reset(&self->scan, NULL);

	EXPECT_EQ(KMSG_MAX_LINES + 8, kmsg_scan(&self->scan));
	EXPECT_EQ(KMSG_MAX_LINES + 8, self->scan.nr_warnings);
	EXPECT_EQ(KMSG_MAX_LINES, self->scan.nr_lines);
	EXPECT_EQ(8, self->scan.nr_dropped);
}

TEST_F(kmsg, reports_kept_lines_as_diagnostics)
{
	send_record(self->fds[1], "4,102,1002,-;" KMOD_WARNING "\n");
	kmsg_reset(&self->scan, NULL);
	ASSERT_EQ(1, kmsg_scan(&self->scan));

	captured[0] = '\0';
	diag_set_hook(capture_diag);
	kmsg_report(&self->scan, "kernel: ");
	EXPECT_STREQ("kernel: " KMOD_WARNING "\n", captured);
}

TEST(kmsg_reads_the_real_log_from_its_end)
{
	struct kmsg_scan scan;
	int ret;

	ret = kmsg_open(&scan, false);
	if (ret == -EACCES || ret == -EPERM || ret == -ENOENT)
		SKIP(return, "/dev/kmsg not readable: %s", strerror(-ret));
	ASSERT_EQ(0, ret);
	EXPECT_GE(kmsg_scan(&scan), 0);
	kmsg_close(&scan);
}

/* ---- tasks -------------------------------------------------------------- */

TEST(task_state_of_real_tasks)
{
	long long deadline;
	struct child c;
	char comm[32];

	EXPECT_EQ('R', task_state(getpid()));
	ASSERT_EQ(0, task_comm(getpid(), comm, sizeof(comm)));
	EXPECT_STREQ("test_lib", comm);

	ASSERT_EQ(0, child_start(&c, child_hangs, NULL));
	deadline = now_us() + 5000 * 1000LL;
	while (task_state(c.pid) != 'S' && now_us() < deadline)
		sleep_ms(1);
	EXPECT_EQ('S', task_state(c.pid));
	EXPECT_EQ(0, child_abandon(&c, 5000));
	EXPECT_EQ(0, task_state(c.pid));
}

FIXTURE(fake_proc) {
	char *root;
};

static void fake_task(const char *root, int pid, const char *stat,
		      const char *stack)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%d", root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/stat", root, pid);
	write_file(path, stat);
	if (!stack)
		return;
	snprintf(path, sizeof(path), "%s/%d/stack", root, pid);
	write_file(path, stack);
}

FIXTURE_SETUP(fake_proc)
{
	self->root = make_temp_dir();
	ASSERT_NE(NULL, self->root);
	fake_task(self->root, 100, "100 (modprobe) D 1 100 100 0\n",
		  "[<0>] async_synchronize_cookie_domain+0xd5/0x110\n"
		  "[<0>] do_init_module+0x1bd/0x230\n");
	fake_task(self->root, 200, "200 (a) b) S 1 200 200 0\n", NULL);
	fake_task(self->root, 300, "300 (kworker/u4:1+events_unbound) D 2 0 0 0\n",
		  "[<0>] call_usermodehelper_exec+0x107/0x180\n");
	tasks_set_proc_root(self->root);
	captured[0] = '\0';
	diag_set_hook(capture_diag);
}

FIXTURE_TEARDOWN(fake_proc)
{
	tasks_set_proc_root(NULL);
	remove_tree(self->root);
	free(self->root);
}

TEST_F(fake_proc, stat_with_parentheses_in_the_name)
{
	char comm[32];

	EXPECT_EQ('S', task_state(200));
	ASSERT_EQ(0, task_comm(200, comm, sizeof(comm)));
	EXPECT_STREQ("a) b", comm);
	EXPECT_EQ(0, task_state(999));
}

TEST_F(fake_proc, dumps_the_stacks_of_blocked_tasks_only)
{
	EXPECT_EQ(2, tasks_dump_blocked());
	EXPECT_NE(NULL, strstr(captured, "task 100 (modprobe) state D\n"
				"  [<0>] async_synchronize_cookie_domain+0xd5/0x110\n"
				"  [<0>] do_init_module+0x1bd/0x230\n"));
	EXPECT_NE(NULL, strstr(captured, "task 300 (kworker/u4:1+events_unbound) state D\n"
				"  [<0>] call_usermodehelper_exec"));
	EXPECT_EQ(NULL, strstr(captured, "task 200"));
}

/* ---- stacks, the kernel's dump of blocked tasks, the wait-for cycle ---- */

/* As the stock Debian 6.1 kernel showed them in request_module_from_async_*. */
static const char * const requester_stack[] = {
	"[<0>] call_usermodehelper_exec+0x14a/0x1a0",
	"[<0>] __request_module+0x1a5/0x3e0",
	"[<0>] ma_job_fn+0xa3/0xf0 [ma_request]",
	"[<0>] async_run_entry_fn+0x30/0x130",
	"[<0>] process_one_work+0x1c7/0x380",
	"[<0>] worker_thread+0x4d/0x380",
	"[<0>] kthread+0xda/0x100",
	"[<0>] ret_from_fork+0x22/0x30",
	NULL,
};

static const char * const loader_stack[] = {
	"[<0>] async_synchronize_cookie_domain+0x114/0x150",
	"[<0>] do_init_module+0x17a/0x1f0",
	"[<0>] __do_sys_finit_module+0xac/0x120",
	"[<0>] do_syscall_64+0x5d/0xb0",
	"[<0>] entry_SYSCALL_64_after_hwframe+0x6e/0xd8",
	NULL,
};

/* A task blocked elsewhere, and a job held on its gate. */
static const char * const unrelated_stack[] = {
	"[<0>] jbd2_log_wait_commit+0xbd/0x120",
	"[<0>] ext4_sync_file+0x1d4/0x380",
	"[<0>] do_fsync+0x38/0x70",
	NULL,
};

static const char * const gated_job_stack[] = {
	"[<0>] ma_job_fn+0x40/0x90 [ma_gate]",
	"[<0>] async_run_entry_fn+0x30/0x130",
	"[<0>] process_one_work+0x1c7/0x380",
	NULL,
};

/* A blocked task with @frames (NULL-terminated) as its stack. */
static void make_task(struct task_stack *t, int pid, const char *comm,
		      const char *parent, const char *cmdline,
		      const char * const frames[])
{
	size_t i;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->ppid = pid - 1;
	t->state = 'D';
	snprintf(t->comm, sizeof(t->comm), "%s", comm);
	snprintf(t->parent_comm, sizeof(t->parent_comm), "%s", parent);
	snprintf(t->cmdline, sizeof(t->cmdline), "%s", cmdline);
	for (i = 0; frames[i]; i++)
		task_stack_add(t, frames[i]);
}

TEST(stack_frames_leave_out_generic_and_unreliable_ones)
{
	struct task_stack t;
	char func[64];

	make_task(&t, 25, "kworker/u4:1+events_unbound", "kthreadd", "",
		  requester_stack);
	ASSERT_EQ(4, t.nr_frames);
	EXPECT_EQ(4, t.nr_trimmed);
	EXPECT_STREQ("call_usermodehelper_exec+0x14a/0x1a0", t.frames[0]);
	EXPECT_STREQ("ma_job_fn+0xa3/0xf0 [ma_request]", t.frames[2]);
	task_frame_function(&t, 2, func, sizeof(func));
	EXPECT_STREQ("ma_job_fn", func);
	EXPECT_EQ(1, task_stack_find(&t, "__request_module"));
	EXPECT_EQ(0, task_stack_find(&t, "call_usermode*"));
	EXPECT_EQ(-1, task_stack_find(&t, "kthread"));

	/* The kernel's dump: scheduler frames, "? " guesses, repeats. */
	memset(&t, 0, sizeof(t));
	EXPECT_TRUE(task_stack_add(&t, " __schedule+0x34d/0x9e0"));
	EXPECT_TRUE(task_stack_add(&t, " schedule+0x5d/0xe0"));
	EXPECT_TRUE(task_stack_add(&t, " schedule_timeout+0x118/0x150"));
	EXPECT_TRUE(task_stack_add(&t, " ? __request_module+0x1a5/0x3e0"));
	EXPECT_TRUE(task_stack_add(&t, " __wait_for_common+0x8f/0x190"));
	EXPECT_TRUE(task_stack_add(&t, " call_usermodehelper_exec+0x14a/0x1a0"));
	EXPECT_TRUE(task_stack_add(&t, " call_usermodehelper_exec+0x14a/0x1a0"));
	EXPECT_TRUE(task_stack_add(&t, " __request_module+0x1a5/0x3e0"));
	EXPECT_FALSE(task_stack_add(&t, " <TASK>"));
	EXPECT_FALSE(task_stack_add(&t, "Call Trace:"));
	EXPECT_FALSE(task_stack_add(&t, "RIP: 0033:0x7f3c1e6c8f29"));
	ASSERT_EQ(2, t.nr_frames);
	EXPECT_EQ(6, t.nr_trimmed);
	EXPECT_STREQ("call_usermodehelper_exec+0x14a/0x1a0", t.frames[0]);
	EXPECT_STREQ("__request_module+0x1a5/0x3e0", t.frames[1]);
}

TEST(stack_frames_are_bounded)
{
	struct task_stack t;
	char frame[64];
	int i;

	memset(&t, 0, sizeof(t));
	for (i = 0; i < TASK_FRAMES_MAX + 5; i++) {
		snprintf(frame, sizeof(frame), "[<0>] f%d+0x1/0x2", i);
		task_stack_add(&t, frame);
	}
	EXPECT_EQ(TASK_FRAMES_MAX, t.nr_frames);
	EXPECT_EQ(5, t.nr_dropped);
}

/* sysrq w on the stock kernel, as /dev/kmsg gives it: one line a record. */
static const char * const sysrq_w_dump[] = {
	"sysrq: Show Blocked State",
	"task:kworker/u4:1    state:D stack:0     pid:25    ppid:2      flags:0x00004000",
	"Workqueue: events_unbound async_run_entry_fn",
	"Call Trace:",
	" <TASK>",
	" __schedule+0x34d/0x9e0",
	" schedule+0x5d/0xe0",
	" schedule_timeout+0x118/0x150",
	" __wait_for_common+0x8f/0x190",
	" ? usleep_range_state+0x90/0x90",
	" call_usermodehelper_exec+0x14a/0x1a0",
	" __request_module+0x1a5/0x3e0",
	" ma_job_fn+0xa3/0xf0 [ma_request]",
	" async_run_entry_fn+0x30/0x130",
	" process_one_work+0x1c7/0x380",
	" worker_thread+0x4d/0x380",
	" ? rescuer_thread+0x3a0/0x3a0",
	" kthread+0xda/0x100",
	" ? kthread_complete_and_exit+0x20/0x20",
	" ret_from_fork+0x22/0x30",
	" </TASK>",
	"task:modprobe        state:D stack:0     pid:127   ppid:126    flags:0x00004002",
	"Call Trace:",
	" <TASK>",
	" __schedule+0x34d/0x9e0",
	" schedule+0x5d/0xe0",
	" async_synchronize_cookie_domain+0x114/0x150",
	" ? cpuusage_read+0x10/0x10",
	" do_init_module+0x17a/0x1f0",
	" __do_sys_finit_module+0xac/0x120",
	" do_syscall_64+0x5d/0xb0",
	" entry_SYSCALL_64_after_hwframe+0x6e/0xd8",
	"RIP: 0033:0x7f3c1e6c8f29",
	"RSP: 002b:00007ffd3ad4e648 EFLAGS: 00000246 ORIG_RAX: 0000000000000139",
	" </TASK>",
};

TEST(sysrq_w_dump_is_parsed_into_tasks)
{
	static struct blocked_dump d;
	const struct task_stack *t;
	size_t i;

	blocked_dump_reset(&d);
	for (i = 0; i < ARRAY_SIZE(sysrq_w_dump); i++)
		blocked_dump_message(&d, sysrq_w_dump[i]);
	/* A hung-task report of the same task meanwhile: not a second one. */
	blocked_dump_message(&d, sysrq_w_dump[21]);
	blocked_dump_message(&d, " load_module+0x1/0x2");

	EXPECT_TRUE(d.header);
	ASSERT_EQ(2, d.tasks.nr);
	t = &d.tasks.tasks[0];
	EXPECT_EQ(25, t->pid);
	EXPECT_EQ(2, t->ppid);
	EXPECT_EQ('D', t->state);
	EXPECT_STREQ("kworker/u4:1", t->comm);
	ASSERT_EQ(4, t->nr_frames);
	EXPECT_STREQ("call_usermodehelper_exec+0x14a/0x1a0", t->frames[0]);
	EXPECT_STREQ("async_run_entry_fn+0x30/0x130", t->frames[3]);
	t = &d.tasks.tasks[1];
	EXPECT_EQ(127, t->pid);
	EXPECT_EQ(126, t->ppid);
	EXPECT_STREQ("modprobe", t->comm);
	ASSERT_EQ(3, t->nr_frames);
	EXPECT_STREQ("async_synchronize_cookie_domain+0x114/0x150",
		     t->frames[0]);
	EXPECT_STREQ("__do_sys_finit_module+0xac/0x120", t->frames[2]);
}

/* Is @line exactly @parts (NULL-terminated) one after the other? */
static bool is_sequence(const char *line, const char * const parts[])
{
	size_t i, n;

	for (i = 0; parts[i]; i++) {
		n = strlen(parts[i]);
		if (strncmp(line, parts[i], n))
			return false;
		line += n;
	}
	return !*line;
}

static const char * const cycle_of_request[] = {
	"async job ma_job_fn [ma_request] in kworker/u4:1 (pid 25)",
	" -> request_module(kyber-iosched) -> modprobe (pid 127)",
	" -> do_init_module -> async_synchronize_cookie_domain",
	" -> waits for the async job in kworker/u4:1 (pid 25)",
	NULL,
};

static const char * const cycle_of_elevator[] = {
	"async job ma_job_fn.cold [ma_elv] in kworker/u4:0 (pid 9)",
	" -> elevator_get -> request_module(kyber-iosched)",
	" -> modprobe (pid 114) -> do_init_module",
	" -> async_synchronize_cookie_domain",
	" -> waits for the async job in kworker/u4:0 (pid 9)",
	NULL,
};

TEST(wait_for_cycle_of_a_request_from_async)
{
	static struct task_set set;
	struct task_stack t;
	char line[1024];

	memset(&set, 0, sizeof(set));
	make_task(&t, 25, "kworker/u4:1+events_unbound", "kthreadd", "",
		  requester_stack);
	task_set_add(&set, &t);
	make_task(&t, 40, "jbd2/sda1-8", "kthreadd", "", unrelated_stack);
	task_set_add(&set, &t);
	make_task(&t, 127, "modprobe", "kworker/u4:0", "/sbin/modprobe -q -- kyber-iosched",
		  loader_stack);
	task_set_add(&set, &t);

	EXPECT_TRUE(waitfor_cycle(&set, line, sizeof(line)));
	EXPECT_TRUE(is_sequence(line, cycle_of_request));
	EXPECT_TRUE(waitfor_involved(&set.tasks[0]));
	EXPECT_FALSE(waitfor_involved(&set.tasks[1]));
	EXPECT_TRUE(waitfor_involved(&set.tasks[2]));
}

TEST(wait_for_cycle_names_the_caller_of_request_module)
{
	static const char * const elv_stack[] = {
		"[<0>] call_usermodehelper_exec+0x14a/0x1a0",
		"[<0>] __request_module+0x1a5/0x3e0",
		"[<0>] elevator_get+0x90/0xc0",
		"[<0>] elv_iosched_store+0xfc/0x200",
		"[<0>] kernel_write+0xf2/0x1b0",
		"[<0>] ma_job_fn.cold+0x7b/0xab [ma_elv]",
		"[<0>] async_run_entry_fn+0x30/0x130",
		NULL,
	};
	static struct task_set set;
	struct task_stack t;
	char line[1024];

	memset(&set, 0, sizeof(set));
	make_task(&t, 114, "modprobe", "kworker/u4:1", "/sbin/modprobe -q -- kyber-iosched",
		  loader_stack);
	task_set_add(&set, &t);
	make_task(&t, 9, "kworker/u4:0+events_unbound", "kthreadd", "",
		  elv_stack);
	task_set_add(&set, &t);

	EXPECT_TRUE(waitfor_cycle(&set, line, sizeof(line)));
	EXPECT_TRUE(is_sequence(line, cycle_of_elevator));
}

TEST(no_wait_for_cycle_in_unrelated_stacks)
{
	static struct task_set set;
	struct task_stack t;
	char line[1024];

	/* Nothing blocked at all. */
	memset(&set, 0, sizeof(set));
	EXPECT_FALSE(waitfor_cycle(&set, line, sizeof(line)));
	EXPECT_STREQ("none seen: no task of module loading or async work is blocked",
		     line);

	/* A job held on its gate, a task in the file system. */
	make_task(&t, 30, "kworker/u4:2+events_unbound", "kthreadd", "",
		  gated_job_stack);
	task_set_add(&set, &t);
	make_task(&t, 40, "jbd2/sda1-8", "kthreadd", "", unrelated_stack);
	task_set_add(&set, &t);
	EXPECT_FALSE(waitfor_cycle(&set, line, sizeof(line)));
	EXPECT_STREQ("none seen: kworker/u4:2 (pid 30) in ma_job_fn [ma_gate]",
		     line);
	EXPECT_EQ(NULL, strstr(line, "request_module"));
}

TEST(no_wait_for_cycle_with_one_party_only)
{
	static struct task_set set;
	struct task_stack t;
	char line[1024];

	/* The async job waits for modprobe, but no modprobe waits for it. */
	memset(&set, 0, sizeof(set));
	make_task(&t, 25, "kworker/u4:1+events_unbound", "kthreadd", "",
		  requester_stack);
	task_set_add(&set, &t);
	EXPECT_FALSE(waitfor_cycle(&set, line, sizeof(line)));
	EXPECT_NE(NULL, strstr(line, "none seen: async job ma_job_fn [ma_request]"));
	EXPECT_NE(NULL, strstr(line, "no module loader waits for async work"));

	/* A load of the runner's own (not a usermode helper) waits for async. */
	make_task(&t, 300, "module_async", "module_async", "", loader_stack);
	task_set_add(&set, &t);
	EXPECT_FALSE(waitfor_cycle(&set, line, sizeof(line)));
	EXPECT_NE(NULL, strstr(line, "not started by request_module() (parent: module_async)"));

	/* The loader alone. */
	memset(&set, 0, sizeof(set));
	task_set_add(&set, &t);
	EXPECT_FALSE(waitfor_cycle(&set, line, sizeof(line)));
	EXPECT_NE(NULL, strstr(line, "no async job waits in request_module()"));
}

/* ---- modules (nothing is loaded) ---------------------------------------- */

TEST(module_names_from_files)
{
	char name[MA_MODULE_NAME_LEN];

	module_name_from_path(name, "/lib/modules/6.1.0/kernel/block/kyber-iosched.ko.xz",
			      sizeof(name));
	EXPECT_STREQ("kyber_iosched", name);
	module_name_from_path(name, "modules/ma_plain.ko", sizeof(name));
	EXPECT_STREQ("ma_plain", name);
	module_name_normalize(name, "kyber-iosched", sizeof(name));
	EXPECT_STREQ("kyber_iosched", name);
}

TEST(modules_dep_lookup)
{
	char *dir = make_temp_dir();
	char path[PATH_MAX];

	ASSERT_NE(NULL, dir);
	snprintf(path, sizeof(path), "%s/modules.dep", dir);
	write_file(path,
		   "kernel/block/kyber-iosched.ko.xz:\n"
		   "kernel/drivers/block/null_blk/null_blk.ko.xz: kernel/fs/configfs/configfs.ko.xz\n"
		   "extra/ma_nested.ko:\n");
	EXPECT_TRUE(modules_file_lists(path, "kyber-iosched"));
	EXPECT_TRUE(modules_file_lists(path, "kyber_iosched"));
	EXPECT_TRUE(modules_file_lists(path, "null_blk"));
	EXPECT_TRUE(modules_file_lists(path, "ma_nested"));
	/* A dependency is not an entry of its own, a prefix no match. */
	EXPECT_FALSE(modules_file_lists(path, "configfs"));
	EXPECT_FALSE(modules_file_lists(path, "null"));
	EXPECT_FALSE(modules_file_lists(path, "bfq"));
	EXPECT_FALSE(modules_file_lists("/nonexistent/modules.dep", "bfq"));
	remove_tree(dir);
	free(dir);
}

TEST(module_list_from_proc_modules)
{
	char *dir = make_temp_dir();
	struct modlist *list = malloc(sizeof(*list));
	char path[PATH_MAX];

	ASSERT_NE(NULL, dir);
	ASSERT_NE(NULL, list);
	snprintf(path, sizeof(path), "%s/modules", dir);
	write_file(path,
		   "null_blk 53248 0 - Live 0xffffffffc0a1c000\n"
		   "configfs 57344 2 null_blk, Live 0xffffffffc0a0d000\n"
		   "kyber_iosched 32768 1 - Loading 0xffffffffc0a05000 (O+)\n");
	ASSERT_EQ(0, modlist_read_file(list, path));
	EXPECT_EQ(3, list->nr);
	EXPECT_TRUE(modlist_has(list, "null_blk"));
	EXPECT_TRUE(modlist_has(list, "kyber-iosched"));
	EXPECT_FALSE(modlist_has(list, "bfq"));
	EXPECT_EQ(-ENOENT, modlist_read_file(list, "/nonexistent/modules"));
	remove_tree(dir);
	free(dir);
	free(list);
}

TEST(loading_a_missing_file_fails_in_the_child)
{
	EXPECT_EQ(-ENOENT, module_load("/nonexistent/ma_plain.ko", "", 5000));
}

TEST(unloading_a_module_that_is_not_there)
{
	int ret = module_unload("ma_not_loaded_anywhere", 5000);

	if (ret == -EPERM)
		SKIP(return, "no CAP_SYS_MODULE");
	if (ret == -ENOSYS)
		SKIP(return, "this kernel has no module support");
	EXPECT_EQ(-ENOENT, ret);
}

/* ---- the runner's KTAP -------------------------------------------------- */

/* The case names are an interface (DESIGN section 4): exact, in order. */
static const char * const case_names[] = {
	"async_init_completes",
	"async_worker_init_completes",
	"plain_load_skips_unrelated_async",
	"async_probe_skips_unrelated_async",
	"request_module_from_async_null_blk",
	"request_module_from_async_kyber-iosched",
	"request_module_from_async_bfq",
	"request_module_from_async_async_probe",
	"elevator_switch_from_async",
	"nested_async_load",
	"warn_on_sync_request_from_async",
};

#define NR_CASES	ARRAY_SIZE(case_names)

struct ktap_result {
	bool ok;
	unsigned int number;
	char name[128];
	char directive[256];	/* after " # ", or "" */
};

struct ktap {
	bool version;
	int plan;		/* -1: no plan line */
	unsigned int nr_results;
	struct ktap_result results[64];
	unsigned int nr_diagnostics;
	char errors[512];	/* what is wrong with the output, or "" */
};

static void ktap_error(struct ktap *k, const char *what, const char *line)
{
	size_t n = strlen(k->errors);

	snprintf(k->errors + n, sizeof(k->errors) - n, "%s: '%s'; ", what,
		 line);
}

static void ktap_parse_result(struct ktap *k, char *line)
{
	struct ktap_result *r = &k->results[k->nr_results];
	char *rest, *hash;

	r->ok = !strncmp(line, "ok ", 3);
	rest = line + (r->ok ? 3 : 7);
	r->number = strtoul(rest, &rest, 10);
	if (*rest != ' ') {
		ktap_error(k, "result without a name", line);
		return;
	}
	rest++;
	hash = strstr(rest, " # ");
	if (hash) {
		snprintf(r->directive, sizeof(r->directive), "%s", hash + 3);
		*hash = '\0';
	}
	snprintf(r->name, sizeof(r->name), "%s", rest);
	if (strchr(r->name, ' ') || !r->name[0])
		ktap_error(k, "bad test name", line);
	if (k->nr_results < ARRAY_SIZE(k->results) - 1)
		k->nr_results++;
}

static void ktap_parse(struct ktap *k, char *out)
{
	char *line, *save = NULL;
	unsigned int lineno = 0;

	memset(k, 0, sizeof(*k));
	k->plan = -1;
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save), lineno++) {
		if (!lineno && !strcmp(line, "TAP version 13"))
			k->version = true;
		else if (!strncmp(line, "1..", 3) && k->plan < 0)
			k->plan = atoi(line + 3);
		else if (!strncmp(line, "ok ", 3) || !strncmp(line, "not ok ", 7))
			ktap_parse_result(k, line);
		else if (line[0] == '#')
			k->nr_diagnostics++;
		else
			ktap_error(k, "not KTAP", line);
	}
}

/* The output is KTAP with one result per expected case, numbered in order. */
static void ktap_check(struct __test_metadata *_metadata, struct ktap *k,
		       const char * const names[], unsigned int nr)
{
	unsigned int i;

	EXPECT_STREQ("", k->errors);
	EXPECT_TRUE(k->version);
	EXPECT_EQ((int)nr, k->plan);
	ASSERT_EQ(nr, k->nr_results);
	for (i = 0; i < nr; i++) {
		EXPECT_EQ(i + 1, k->results[i].number);
		EXPECT_STREQ(names[i], k->results[i].name);
	}
}

static const char *runner_path(void)
{
	const char *path = getenv("MODULE_ASYNC_RUNNER");

	return path && !access(path, X_OK) ? path : NULL;
}

/*
 * Run the runner with @args (NULL-terminated), as @uid unless it is -1;
 * its stdout in @out. Returns its exit status, or -1.
 */
static int run_runner(const char *const args[], uid_t uid, char *out,
		      size_t len)
{
	const char *argv[16] = { runner_path() };
	int fds[2], status, i;
	size_t n = 0;
	ssize_t r;
	pid_t pid;

	for (i = 0; args[i] && i < 14; i++)
		argv[i + 1] = args[i];
	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		int null = open("/dev/null", O_WRONLY);

		dup2(fds[1], STDOUT_FILENO);
		dup2(null, STDERR_FILENO);	/* usage text: not under test */
		close(fds[0]);
		close(fds[1]);
		if (uid != (uid_t)-1 && (setgid(uid) || setuid(uid)))
			_exit(126);
		execv(argv[0], (char **)argv);
		_exit(127);
	}
	close(fds[1]);
	while (n + 1 < len && (r = read(fds[0], out + n, len - n - 1)) > 0)
		n += r;
	out[n] = '\0';
	close(fds[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* Why the runner's tests skip when have_runner() is false. */
#define NO_RUNNER "MODULE_ASYNC_RUNNER not set or not executable"

static bool have_runner(void)
{
	return runner_path();
}

TEST(runner_lists_every_case_with_its_safety)
{
	static const char * const args[] = { "--list", NULL };
	char out[4096], *line, *save = NULL, name[128], safety[64];
	unsigned int i = 0;

	if (!have_runner())
		SKIP(return, NO_RUNNER);
	ASSERT_EQ(0, run_runner(args, -1, out, sizeof(out)));
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save), i++) {
		int fields = sscanf(line, "%127s %63s", name, safety);

		ASSERT_EQ(2, fields);
		ASSERT_LT(i, NR_CASES);
		EXPECT_STREQ(case_names[i], name);
		EXPECT_TRUE(!strcmp(safety, "safe") ||
			    !strcmp(safety, "unsafe-if-always-sync") ||
			    !strcmp(safety, "unsafe"));
	}
	EXPECT_EQ(NR_CASES, i);
}

TEST(runner_skips_every_case_without_its_modules)
{
	static const char * const args[] = {
		"--modules-dir", "/nonexistent/modules", NULL,
	};
	static char out[16384];
	struct ktap k;
	unsigned int i;
	int status;

	if (!have_runner())
		SKIP(return, NO_RUNNER);
	if (geteuid())
		SKIP(return, "as non-root every case skips for that reason");
	status = run_runner(args, -1, out, sizeof(out));
	ktap_parse(&k, out);
	ktap_check(_metadata, &k, case_names, NR_CASES);
	for (i = 0; i < k.nr_results; i++) {
		EXPECT_TRUE(k.results[i].ok);
		EXPECT_EQ(0, strncmp(k.results[i].directive, "SKIP ", 5));
		EXPECT_NE(NULL, strstr(k.results[i].directive,
				       "test modules not built"));
	}
	EXPECT_EQ(4, status);	/* KSFT_SKIP */
}

TEST(runner_skips_every_case_when_not_root)
{
	static const char * const args[] = { NULL };
	static char out[16384];
	struct ktap k;
	unsigned int i;
	int status;

	if (!have_runner())
		SKIP(return, NO_RUNNER);
	status = run_runner(args, geteuid() ? (uid_t)-1 : 65534, out,
			    sizeof(out));
	ASSERT_NE(126, status);
	ktap_parse(&k, out);
	ktap_check(_metadata, &k, case_names, NR_CASES);
	for (i = 0; i < k.nr_results; i++) {
		EXPECT_TRUE(k.results[i].ok);
		EXPECT_STREQ("SKIP not root", k.results[i].directive);
	}
	EXPECT_EQ(4, status);
}

TEST(runner_runs_the_selected_cases_in_table_order)
{
	static const char * const args[] = {
		"--case", "warn_on_sync_request_from_async",
		"--case", "async_init_completes",
		"--modules-dir", "/nonexistent/modules", NULL,
	};
	static const char * const expected[] = {
		"async_init_completes", "warn_on_sync_request_from_async",
	};
	static char out[16384];
	struct ktap k;

	if (!have_runner())
		SKIP(return, NO_RUNNER);
	EXPECT_EQ(4, run_runner(args, -1, out, sizeof(out)));
	ktap_parse(&k, out);
	ktap_check(_metadata, &k, expected, ARRAY_SIZE(expected));
}

TEST(runner_usage_errors_exit_2_with_nothing_on_stdout)
{
	static const char * const unknown_case[] = { "--case", "no_such_case", NULL };
	static const char * const bad_timeout[] = { "--timeout-ms", "0", NULL };
	static const char * const not_a_number[] = { "--timeout-ms", "10s", NULL };
	static const char * const unknown_option[] = { "--no-such-option", NULL };
	static const char * const extra_argument[] = { "extra", NULL };
	const char * const *const all[] = {
		unknown_case, bad_timeout, not_a_number, unknown_option,
		extra_argument,
	};
	char out[4096];
	unsigned int i;

	if (!have_runner())
		SKIP(return, NO_RUNNER);
	for (i = 0; i < ARRAY_SIZE(all); i++) {
		EXPECT_EQ(2, run_runner(all[i], -1, out, sizeof(out)));
		EXPECT_STREQ("", out);
	}
}

TEST(runner_help)
{
	static const char * const args[] = { "--help", NULL };
	char out[4096];

	if (!have_runner())
		SKIP(return, NO_RUNNER);
	EXPECT_EQ(0, run_runner(args, -1, out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "Usage:"));
	EXPECT_NE(NULL, strstr(out, "--allow-deadlock"));
}

/* ---- the KTAP document after a wedge ------------------------------------ */

/* Run @fn in a child, its stdout in @out; returns its exit status. */
static int ktap_run(void (*fn)(void), char *out, size_t len)
{
	int fds[2], status;
	size_t n = 0;
	ssize_t r;
	pid_t pid;

	if (pipe(fds))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		close(fds[1]);
		fn();
		_exit(99);	/* ktap_exit() did not exit */
	}
	close(fds[1]);
	while (n + 1 < len && (r = read(fds[0], out + n, len - n - 1)) > 0)
		n += r;
	out[n] = '\0';
	close(fds[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static const char * const wedge_cases[] = {
	"first_passes", "second_wedges", "third", "fourth",
};

static void run_a_wedge(void)
{
	struct ktap_verdict pass = { .kind = KTAP_PASS };
	struct ktap_verdict wedge = {
		.kind = KTAP_WEDGED, .bound_ms = 10000,
		.reason = "the job did not return within 10000 ms",
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	ktap_begin(ARRAY_SIZE(wedge_cases));
	if (ktap_may_run(wedge_cases[0]))
		ktap_result(wedge_cases[0], &pass);
	if (ktap_may_run(wedge_cases[1])) {
		ktap_wedge(wedge_cases[1]);
		ktap_diag("evidence");
		ktap_result(wedge_cases[1], &wedge);
	}
	if (ktap_may_run(wedge_cases[2]))
		ktap_result(wedge_cases[2], &pass);	/* must not happen */
	if (ktap_may_run(wedge_cases[3]))
		ktap_result(wedge_cases[3], &pass);
	ktap_exit();
}

TEST(ktap_after_a_wedge_skips_the_rest_naming_the_case)
{
	static char out[4096], copy[4096];
	struct ktap k;
	int status;

	status = ktap_run(run_a_wedge, out, sizeof(out));
	EXPECT_EQ(1, status);
	strcpy(copy, out);
	ktap_parse(&k, copy);
	ktap_check(_metadata, &k, wedge_cases, ARRAY_SIZE(wedge_cases));
	EXPECT_TRUE(k.results[0].ok);
	EXPECT_STREQ("", k.results[0].directive);
	EXPECT_FALSE(k.results[1].ok);
	EXPECT_STREQ("TIMEOUT 10s", k.results[1].directive);
	EXPECT_TRUE(k.results[2].ok);
	EXPECT_STREQ("SKIP kernel wedged by second_wedges", k.results[2].directive);
	EXPECT_TRUE(k.results[3].ok);
	EXPECT_STREQ("SKIP kernel wedged by second_wedges", k.results[3].directive);

	/* Evidence, reason, verdict, then the wedge, in this order. */
	EXPECT_NE(NULL, strstr(out, "# evidence\n"
			       "# the job did not return within 10000 ms\n"
			       "not ok 2 second_wedges # TIMEOUT 10s\n"
			       "# kernel wedged by second_wedges\n"
			       "ok 3 third # SKIP kernel wedged by second_wedges\n"));
	EXPECT_NE(NULL, strstr(out, "# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:2 error:0\n"));
}

static void run_a_timeout_without_wedge(void)
{
	struct ktap_verdict slow = {
		.kind = KTAP_TIMEOUT, .bound_ms = 2500,
		.reason = "the job did not start within 2500 ms",
	};
	struct ktap_verdict pass = { .kind = KTAP_PASS };

	ktap_begin(2);
	ktap_result("slow", &slow);
	if (ktap_may_run("after"))
		ktap_result("after", &pass);
	ktap_exit();
}

TEST(ktap_timeout_without_a_wedge_lets_the_run_go_on)
{
	static char out[4096];

	EXPECT_EQ(1, ktap_run(run_a_timeout_without_wedge, out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "not ok 1 slow # TIMEOUT 2.500s\nok 2 after\n"));
	EXPECT_EQ(NULL, strstr(out, "wedged"));
}

TEST_HARNESS_MAIN
