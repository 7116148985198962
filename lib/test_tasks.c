// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of lib/tasks.c: the states of real tasks, a faked /proc, and
 * the stack frames kept of a task.
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
#include "tasks.h"
#include "test_util.h"

TEST(task_state_of_real_tasks)
{
	long long deadline;
	struct child c;
	char comm[32];

	EXPECT_EQ('R', task_state(getpid()));
	ASSERT_EQ(0, task_comm(getpid(), comm, sizeof(comm)));
	EXPECT_STREQ("test_tasks", comm);

	ASSERT_EQ(0, child_start(&c, child_hangs, NULL));
	deadline = now_us() + 5000 * 1000LL;
	while (task_state(c.pid) != 'S' && now_us() < deadline)
		sleep_ms(1);
	EXPECT_EQ('S', task_state(c.pid));
	EXPECT_EQ(0, child_abandon(&c, 5000));
	EXPECT_EQ(0, task_state(c.pid));
}

/* A task that sleeps and wakes has counted one more sleep. */
TEST(a_task_counts_its_sleeps)
{
	long before, after;

	ASSERT_EQ(0, task_sleeps(getpid(), &before));
	sleep_ms(1);
	ASSERT_EQ(0, task_sleeps(getpid(), &after));
	EXPECT_LT(before, after);
	EXPECT_EQ(-ENOENT, task_sleeps(-1, &after));
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

TEST_F(fake_proc, sleeps_from_the_status_file)
{
	char path[PATH_MAX];
	long n = -1;

	EXPECT_EQ(-ENOENT, task_sleeps(100, &n));
	snprintf(path, sizeof(path), "%s/100/status", self->root);
	write_file(path, "Name:\tmodprobe\nvoluntary_ctxt_switches:\t17\n"
		   "nonvoluntary_ctxt_switches:\t3\n");
	EXPECT_EQ(0, task_sleeps(100, &n));
	EXPECT_EQ(17, n);
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

/*
 * The blocked tasks read: those in D, and a modprobe asleep (S) in its load
 * waiting for the same module's load under way (stock 6.1's stack; 7.2's,
 * its command line read too); not one asleep elsewhere.
 */
TEST_F(fake_proc, reads_blocked_tasks_and_loads_waiting_for_a_load)
{
	static struct task_set set;
	char path[PATH_MAX];

	fake_task(self->root, 400, "400 (modprobe) S 300 400 400 0\n",
		  "[<0>] load_module+0x8d4/0x21a0\n"
		  "[<0>] __do_sys_finit_module+0xac/0x120\n"
		  "[<0>] do_syscall_64+0x3b/0x90\n");
	fake_task(self->root, 410, "410 (modprobe) S 300 410 410 0\n",
		  "[<0>] idempotent_init_module+0x175/0x360\n"
		  "[<0>] __x64_sys_finit_module+0x5e/0xb0\n");
	snprintf(path, sizeof(path), "%s/410/cmdline", self->root);
	write_file(path, "/sbin/modprobe");
	fake_task(self->root, 500, "500 (modprobe) S 1 500 500 0\n",
		  "[<0>] do_wait+0x160/0x2f0\n");
	EXPECT_EQ(4, tasks_read_blocked(&set));
	ASSERT_NE(NULL, task_set_find(&set, 400));
	EXPECT_EQ('S', task_set_find(&set, 400)->state);
	EXPECT_TRUE(task_waits_for_a_load(task_set_find(&set, 400)));
	ASSERT_NE(NULL, task_set_find(&set, 410));
	EXPECT_TRUE(task_waits_for_a_load(task_set_find(&set, 410)));
	EXPECT_STREQ("/sbin/modprobe", task_set_find(&set, 410)->cmdline);
	EXPECT_FALSE(task_waits_for_a_load(task_set_find(&set, 100)));
	EXPECT_EQ(NULL, task_set_find(&set, 500));
	EXPECT_EQ(NULL, task_set_find(&set, 200));
}

TEST_F(fake_proc, counts_the_tasks_of_a_name)
{
	EXPECT_EQ(1, tasks_named("modprobe"));
	fake_task(self->root, 400, "400 (modprobe) S 1 400 400 0\n", NULL);
	EXPECT_EQ(2, tasks_named("modprobe"));
	EXPECT_EQ(0, tasks_named("modprob"));
}

/* A load held in do_init_module()'s wait, seen by its stack or its wchan. */
TEST_F(fake_proc, a_held_load_is_seen_by_its_stack_or_its_wchan)
{
	char path[PATH_MAX];

	EXPECT_EQ(1, task_waits_in(100, "async_synchronize_*", TASK_VIEW_STACK));
	EXPECT_EQ(0, task_waits_in(300, "async_synchronize_*", TASK_VIEW_STACK));
	EXPECT_GT(0, task_waits_in(999, "async_synchronize_*", TASK_VIEW_STACK));
	/* No stack, no wchan: kthreadd (2) is not there. */
	EXPECT_EQ(TASK_VIEW_NONE, tasks_view());

	fake_task(self->root, 2, "2 (kthreadd) S 0 0 0 0\n", NULL);
	snprintf(path, sizeof(path), "%s/2/wchan", self->root);
	write_file(path, "kthreadd");
	snprintf(path, sizeof(path), "%s/100/wchan", self->root);
	write_file(path, "async_synchronize_cookie_domain");
	snprintf(path, sizeof(path), "%s/300/wchan", self->root);
	write_file(path, "0");
	EXPECT_EQ(TASK_VIEW_WCHAN, tasks_view());
	EXPECT_EQ(1, task_waits_in(100, "async_synchronize_*", TASK_VIEW_WCHAN));
	EXPECT_EQ(0, task_waits_in(300, "async_synchronize_*", TASK_VIEW_WCHAN));

	snprintf(path, sizeof(path), "%s/2/stack", self->root);
	write_file(path, "[<0>] kthreadd+0x1c0/0x220\n[<0>] ret_from_fork+0x22/0x30\n");
	EXPECT_EQ(TASK_VIEW_STACK, tasks_view());

	/* Running, not blocked: on its way in or out of the wait. */
	fake_task(self->root, 400, "400 (insmod) R 1 400 400 0\n",
		  "[<0>] async_synchronize_cookie_domain+0xd5/0x110\n");
	snprintf(path, sizeof(path), "%s/400/wchan", self->root);
	write_file(path, "async_synchronize_cookie_domain");
	EXPECT_EQ(0, task_waits_in(400, "async_synchronize_*", TASK_VIEW_STACK));
	EXPECT_EQ(0, task_waits_in(400, "async_synchronize_*", TASK_VIEW_WCHAN));
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

TEST_HARNESS_MAIN
