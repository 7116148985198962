// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of lib/sysrq.c: the kernel's dump of blocked tasks (sysrq w),
 * as the stock kernel printed it, parsed into tasks.
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

#include "sysrq.h"
#include "tasks.h"
#include "test_util.h"

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

TEST_HARNESS_MAIN
