// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of lib/waitfor.c: the wait-for cycle of a deadlock found in
 * the stacks of blocked tasks, what it says when there is none, and what
 * counts as a wedge's evidence.
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

#include "tasks.h"
#include "waitfor.h"
#include "test_util.h"

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

/* A blocked task of a test: its stack as the kernel showed it. */
struct fake_task {
	int pid;
	const char *comm, *parent, *cmdline;
	const char * const *stack;
	char state;			/* 0: 'D' */
};

/*
 * waitfor_cycle() of @tasks (up to one with pid 0): a cycle found iff
 * @found, its line @line's parts one after the other (unless NULL); the
 * line is left in @buf (room for 1024) for further checks.
 */
static bool expect_cycle(const struct fake_task *tasks, bool found,
			 const char * const line[], char *buf)
{
	static struct task_set set;
	struct task_stack t;

	memset(&set, 0, sizeof(set));
	for (; tasks->pid; tasks++) {
		make_task(&t, tasks->pid, tasks->comm, tasks->parent,
			  tasks->cmdline, tasks->stack);
		if (tasks->state)
			t.state = tasks->state;
		task_set_add(&set, &t);
	}
	if (waitfor_cycle(&set, buf, 1024) != found) {
		fprintf(stderr, "# cycle %sexpected: %s\n", found ? "" : "not ",
			buf);
		return false;
	}
	if (line && !is_sequence(buf, line)) {
		fprintf(stderr, "# got: %s\n", buf);
		return false;
	}
	return true;
}

/* 7.2's loader, as sid's 7.2.13 showed it (a run with deadlocks allowed). */
static const char * const loader72_stack[] = {
	"[<0>] async_synchronize_cookie_domain+0x114/0x160",
	"[<0>] do_init_module+0x1c2/0x290",
	"[<0>] __do_sys_init_module+0x18d/0x200",
	NULL,
};

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
	static const struct fake_task tasks[] = {
		{ 25, "kworker/u4:1+events_unbound", "kthreadd", "",
		  requester_stack },
		{ 40, "jbd2/sda1-8", "kthreadd", "", unrelated_stack },
		{ 127, "modprobe", "kworker/u4:0",
		  "/sbin/modprobe -q -- kyber-iosched", loader_stack },
		{ 0 },
	};
	struct task_stack t;
	char line[1024];

	EXPECT_TRUE(expect_cycle(tasks, true, cycle_of_request, line));
	make_task(&t, 25, "kworker/u4:1", "kthreadd", "", requester_stack);
	EXPECT_TRUE(waitfor_involved(&t));
	make_task(&t, 40, "jbd2/sda1-8", "kthreadd", "", unrelated_stack);
	EXPECT_FALSE(waitfor_involved(&t));
	make_task(&t, 127, "modprobe", "kworker/u4:0", "", loader_stack);
	EXPECT_TRUE(waitfor_involved(&t));
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
	static const struct fake_task tasks[] = {
		{ 114, "modprobe", "kworker/u4:1",
		  "/sbin/modprobe -q -- kyber-iosched", loader_stack },
		{ 9, "kworker/u4:0+events_unbound", "kthreadd", "", elv_stack },
		{ 0 },
	};
	char line[1024];

	EXPECT_TRUE(expect_cycle(tasks, true, cycle_of_elevator, line));
}

/*
 * 7.2 (Debian sid's 7.2.13, console of a run with deadlocks allowed):
 * elv_iosched_load_module() inlined into elv_iosched_store(), the job on
 * the "async" workqueue (6.9+), modprobe in __do_sys_init_module.
 */
TEST(wait_for_cycle_of_the_elevator_on_7_2)
{
	static const char * const elv_stack[] = {
		"[<0>] call_usermodehelper_exec+0x157/0x1b0",
		"[<0>] __request_module+0x1fb/0x2e0",
		"[<0>] elv_iosched_store+0x222/0x250",
		"[<0>] kernfs_fop_write_iter+0x16b/0x210",
		"[<0>] __kernel_write_iter+0x163/0x320",
		"[<0>] kernel_write+0xec/0x1b0",
		"[<0>] ma_job_fn+0x125/0x1d0 [ma_elv]",
		"[<0>] async_run_entry_fn+0x34/0x150",
		NULL,
	};
	static const struct fake_task tasks[] = {
		{ 12, "kworker/u8:0+async", "kthreadd", "", elv_stack },
		{ 130, "modprobe", "kworker/u8:2",
		  "/sbin/modprobe -q -- kyber-iosched", loader72_stack },
		{ 0 },
	};
	static const char * const cycle[] = {
		"async job ma_job_fn [ma_elv] in kworker/u8:0 (pid 12)",
		" -> elv_iosched_store -> request_module(kyber-iosched)",
		" -> modprobe (pid 130) -> do_init_module",
		" -> async_synchronize_cookie_domain",
		" -> waits for the async job in kworker/u8:0 (pid 12)",
		NULL,
	};
	char line[1024];

	EXPECT_TRUE(expect_cycle(tasks, true, cycle, line));
}

/*
 * A kernel without ORC (linux-source-6.1 from tinyconfig) guesses: stale
 * frames above the caller (mntput_no_expire, path_openat here) are not
 * named as the caller of request_module(); elevator_get is.
 */
TEST(wait_for_cycle_names_the_elevator_past_stale_frames)
{
	static const char * const elv_stack[] = {
		"[<0>] call_usermodehelper_exec+0xc6/0x11f",
		"[<0>] __request_module+0x2d3/0x318",
		"[<0>] mntput_no_expire+0x2c/0x19d",
		"[<0>] path_openat+0x83e/0x8f9",
		"[<0>] elevator_get+0x3e/0x74",
		"[<0>] elv_iosched_store+0x95/0xee",
		"[<0>] queue_attr_store+0x3d/0x5f",
		"[<0>] kernel_write+0x49/0x63",
		"[<0>] ma_job_fn+0xff/0x15b [ma_elv]",
		"[<0>] async_run_entry_fn+0x15/0x7a",
		NULL,
	};
	static const struct fake_task tasks[] = {
		{ 5, "kworker/u2:0+events_unbound", "kthreadd", "", elv_stack },
		{ 46, "modprobe", "kworker/u2:1",
		  "/sbin/modprobe -q -- kyber-iosched", loader_stack },
		{ 0 },
	};
	char line[1024];

	EXPECT_TRUE(expect_cycle(tasks, true, NULL, line));
	EXPECT_NE(NULL, strstr(line, " (pid 5) -> elevator_get -> request_module("));
	EXPECT_EQ(NULL, strstr(line, "mntput_no_expire"));
}

/*
 * The nested form (6.1, bookworm's 6.1.192, a run with deadlocks allowed):
 * the module requested uses async itself; the same two parties.
 */
TEST(wait_for_cycle_of_the_nested_load)
{
	static const struct fake_task tasks[] = {
		{ 25, "kworker/u4:1+events_unbound", "kthreadd", "",
		  requester_stack },
		{ 108, "modprobe", "kworker/u4:0",
		  "/sbin/modprobe -q -- ma_nested", loader_stack },
		{ 0 },
	};
	static const char * const cycle[] = {
		"async job ma_job_fn [ma_request] in kworker/u4:1 (pid 25)",
		" -> request_module(ma_nested) -> modprobe (pid 108)",
		" -> do_init_module -> async_synchronize_cookie_domain",
		" -> waits for the async job in kworker/u4:1 (pid 25)",
		NULL,
	};
	char line[1024];

	EXPECT_TRUE(expect_cycle(tasks, true, cycle, line));
}

/*
 * 5.10 (bullseye's 5.10.262, a run with deadlocks allowed): the job on
 * "events_unbound", kernel/kmod.c's __request_module().
 */
TEST(wait_for_cycle_of_a_request_on_5_10)
{
	static const char * const requester510_stack[] = {
		"[<0>] call_usermodehelper_exec+0x125/0x180",
		"[<0>] __request_module+0x183/0x3a0",
		"[<0>] ma_job_fn+0x72/0xb8 [ma_request]",
		"[<0>] async_run_entry_fn+0x39/0x160",
		NULL,
	};
	static const char * const loader510_stack[] = {
		"[<0>] async_synchronize_cookie_domain+0x9a/0x150",
		"[<0>] do_init_module+0x1b7/0x250",
		"[<0>] __do_sys_finit_module+0xb1/0x120",
		NULL,
	};
	static const struct fake_task tasks[] = {
		{ 7, "kworker/u4:0+events_unbound", "kthreadd", "",
		  requester510_stack },
		{ 110, "modprobe", "kworker/u4:1",
		  "/sbin/modprobe -q -- null_blk", loader510_stack },
		{ 0 },
	};
	static const char * const cycle[] = {
		"async job ma_job_fn [ma_request] in kworker/u4:0 (pid 7)",
		" -> request_module(null_blk) -> modprobe (pid 110)",
		" -> do_init_module -> async_synchronize_cookie_domain",
		" -> waits for the async job in kworker/u4:0 (pid 7)",
		NULL,
	};
	char line[1024];

	EXPECT_TRUE(expect_cycle(tasks, true, cycle, line));
}

/*
 * 7.2 (sid's 7.2.13, a run with deadlocks allowed): the job on the "async"
 * workqueue; the nested module's modprobe in idempotent_init_module(),
 * beside a modprobe of the runner's own (its parent is no kernel thread)
 * that waits for async work too: the cycle is the usermode helper's.
 */
TEST(wait_for_cycle_of_the_nested_load_on_7_2)
{
	static const char * const requester72_stack[] = {
		"[<0>] call_usermodehelper_exec+0x157/0x1b0",
		"[<0>] __request_module+0x1fb/0x2e0",
		"[<0>] ma_job_fn+0xa6/0x100 [ma_request]",
		"[<0>] async_run_entry_fn+0x34/0x150",
		NULL,
	};
	static const char * const nested72_stack[] = {
		"[<0>] async_synchronize_cookie_domain+0x114/0x160",
		"[<0>] do_init_module+0x1c2/0x290",
		"[<0>] init_module_from_file+0xc8/0x180",
		"[<0>] idempotent_init_module+0x23e/0x360",
		NULL,
	};
	static const struct fake_task tasks[] = {
		{ 38, "kworker/u8:2+async", "kthreadd", "", requester72_stack },
		{ 128, "modprobe", "module_async", "modprobe null_blk nr_devices=1",
		  loader72_stack },
		{ 130, "modprobe", "kworker/u8:0",
		  "/sbin/modprobe -q -- ma_nested", nested72_stack },
		{ 0 },
	};
	static const struct fake_task runners_own[] = {
		{ 38, "kworker/u8:2+async", "kthreadd", "", requester72_stack },
		{ 128, "modprobe", "module_async", "modprobe null_blk",
		  loader72_stack },
		{ 0 },
	};
	static const char * const cycle[] = {
		"async job ma_job_fn [ma_request] in kworker/u8:2 (pid 38)",
		" -> request_module(ma_nested) -> modprobe (pid 130)",
		" -> do_init_module -> async_synchronize_cookie_domain",
		" -> waits for the async job in kworker/u8:2 (pid 38)",
		NULL,
	};
	char line[1024];

	EXPECT_TRUE(expect_cycle(tasks, true, cycle, line));
	/* Without the helper's modprobe, the runner's own closes no cycle. */
	EXPECT_TRUE(expect_cycle(runners_own, false, NULL, line));
	EXPECT_NE(NULL, strstr(line, "(parent: module_async)"));
}

/*
 * An async job queued while ma_hold's init held requests ma_hold, deadlocks
 * allowed: the modprobe it runs sleeps interruptibly (S) in finit_module()
 * waiting for ma_hold's load under way, while that load, the runner's,
 * waits for async work. Stock 6.1 (bookworm's 6.1.192): in
 * add_unformed_module(), inlined in load_module(); the runner's load shows
 * the frames of loader_stack. 7.2 (sid's 7.2.13): the same file's load,
 * in idempotent_wait_for_completion(), inlined in idempotent_init_module().
 */
static const char * const coming_waiter_stack[] = {
	"[<0>] load_module+0x8d4/0x21a0",
	"[<0>] __do_sys_finit_module+0xac/0x120",
	NULL,
};

static const char * const coming_waiter72_stack[] = {
	"[<0>] idempotent_init_module+0x175/0x360",
	"[<0>] __x64_sys_finit_module+0x5e/0xb0",
	NULL,
};

/*
 * The job, the runner's load with @loader, and ma_hold's modprobe with
 * @waiter in @state; with @insmod, a second load in do_init_module().
 */
static const struct fake_task *
requested_while_loading(const char * const *loader, const char * const *waiter,
			char state, bool insmod)
{
	static struct fake_task tasks[5];
	unsigned int n = 0;

	tasks[n++] = (struct fake_task){ 116, "kworker/u4:3+events_unbound",
					 "kthreadd", "", requester_stack };
	tasks[n++] = (struct fake_task){ 126, "module_async", "module_async",
					 "", loader };
	if (insmod)
		tasks[n++] = (struct fake_task){ 128, "insmod", "module_async",
						 "insmod ma_gate.ko", loader };
	tasks[n++] = (struct fake_task){ 131, "modprobe", "kworker/u4:1",
					 "/sbin/modprobe -q -- ma_hold",
					 waiter, state };
	tasks[n] = (struct fake_task){ 0 };
	return tasks;
}

/* The cycle through ma_hold's modprobe, waiting in @func. */
static const char * const *cycle_through(const char *func)
{
	static char waits[128];
	static const char * const cycle[] = {
		"async job ma_job_fn [ma_request] in kworker/u4:3 (pid 116)",
		" -> request_module(ma_hold) -> modprobe (pid 131)",
		waits,
		" -> module_async (pid 126) -> do_init_module",
		" -> async_synchronize_cookie_domain",
		" -> waits for the async job in kworker/u4:3 (pid 116)",
		NULL,
	};

	snprintf(waits, sizeof(waits), " -> %s waits for ma_hold's load", func);
	return cycle;
}

TEST(wait_for_cycle_of_a_request_for_the_module_loading)
{
	const struct fake_task *tasks;
	char line[1024];

	tasks = requested_while_loading(loader_stack, coming_waiter_stack, 'S',
					false);
	EXPECT_TRUE(expect_cycle(tasks, true, cycle_through("load_module"),
				 line));
	tasks = requested_while_loading(loader72_stack, coming_waiter72_stack,
					'S', false);
	EXPECT_TRUE(expect_cycle(tasks, true,
				 cycle_through("idempotent_init_module"), line));
	/* A modprobe in D in load_module() (reading its file) waits for none. */
	tasks = requested_while_loading(loader_stack, coming_waiter_stack, 'D',
					false);
	EXPECT_TRUE(expect_cycle(tasks, false, NULL, line));
	/* Two loads in do_init_module(): which one it waits for is not read. */
	tasks = requested_while_loading(loader_stack, coming_waiter_stack, 'S',
					true);
	EXPECT_TRUE(expect_cycle(tasks, false, NULL, line));
}

/*
 * Half a cycle, as seen before it closes or after it opened: the job
 * waits for a modprobe still in load_module(), not in the sync; or a
 * modprobe syncs while no job waits for it (its request returned).
 */
TEST(no_wait_for_cycle_in_half_of_one)
{
	static const char * const loading_stack[] = {
		"[<0>] load_module+0x1d3b/0x2b70",
		"[<0>] __do_sys_finit_module+0xac/0x120",
		NULL,
	};
	static const struct fake_task not_yet[] = {
		{ 25, "kworker/u4:1+events_unbound", "kthreadd", "",
		  requester_stack },
		{ 127, "modprobe", "kworker/u4:0",
		  "/sbin/modprobe -q -- kyber-iosched", loading_stack },
		{ 0 },
	};
	static const struct fake_task no_job[] = {
		{ 130, "modprobe", "kworker/u8:2",
		  "/sbin/modprobe -q -- kyber-iosched", loader72_stack },
		{ 0 },
	};
	char line[1024];

	EXPECT_TRUE(expect_cycle(not_yet, false, NULL, line));
	EXPECT_NE(NULL, strstr(line, "no module loader waits for async work"));
	EXPECT_TRUE(expect_cycle(no_job, false, NULL, line));
	EXPECT_NE(NULL, strstr(line, "no async job waits in request_module()"));
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

/* A load that is slow, not stuck: reading its file, no wait for async. */
static const char * const slow_load_stack[] = {
	"[<0>] kernel_read_file+0x1b4/0x2d0",
	"[<0>] __do_sys_finit_module+0x9a/0x120",
	"[<0>] do_syscall_64+0x5d/0xb0",
	NULL,
};

/*
 * A wedge's evidence: the cycle, or a task blocked in async_synchronize_*;
 * a load still running elsewhere (its bound expired) is none.
 */
TEST(wedge_evidence_is_a_cycle_or_a_wait_for_async_work)
{
	static struct task_set set;
	struct task_stack t;
	char line[1024];
	int pid = -1;

	memset(&set, 0, sizeof(set));
	make_task(&t, 130, "insmod", "module_async", "", slow_load_stack);
	task_set_add(&set, &t);
	make_task(&t, 40, "jbd2/sda1-8", "kthreadd", "", unrelated_stack);
	task_set_add(&set, &t);
	EXPECT_FALSE(waitfor_wedge(&set, line, sizeof(line), &pid));
	EXPECT_EQ(0, pid);
	EXPECT_EQ(0, strncmp(line, "none seen", 9)) TH_LOG("%s", line);

	/* A load of the runner's own waits for async work: a party seen. */
	make_task(&t, 300, "module_async", "module_async", "", loader_stack);
	task_set_add(&set, &t);
	EXPECT_FALSE(waitfor_wedge(&set, line, sizeof(line), &pid));
	EXPECT_EQ(300, pid);
	EXPECT_STREQ("module_async (pid 300) blocked in async_synchronize_cookie_domain",
		     line);

	/* The 2013 deadlock's two parties: the cycle. */
	memset(&set, 0, sizeof(set));
	make_task(&t, 25, "kworker/u4:1+events_unbound", "kthreadd", "",
		  requester_stack);
	task_set_add(&set, &t);
	make_task(&t, 127, "modprobe", "kworker/u4:0",
		  "/sbin/modprobe -q -- kyber-iosched", loader_stack);
	task_set_add(&set, &t);
	EXPECT_TRUE(waitfor_wedge(&set, line, sizeof(line), &pid));
	EXPECT_EQ(127, pid);
	EXPECT_NE(NULL, strstr(line, "waits for the async job")) TH_LOG("%s", line);
}

TEST_HARNESS_MAIN
