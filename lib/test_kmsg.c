// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of lib/kmsg.c: records come from a SOCK_SEQPACKET socket,
 * which like /dev/kmsg returns one record per read; one test reads the
 * real log.
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

#include "diag.h"
#include "kmsg.h"
#include "test_util.h"

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

/*
 * The WARNING lines of every generation, as the guests' consoles showed
 * them: kernel/kmod.c:136 in 5.10 and 6.1, kernel/module/kmod.c:143 in
 * 6.12, and 7.2's format (since 6.16), the place first, "CPU#" and the
 * task last.
 */
TEST_F(kmsg, matches_the_warning_of_every_generation)
{
	static const char * const lines[] = {
		"WARNING: CPU: 0 PID: 7 at kernel/kmod.c:136 __request_module+0x214/0x3a0",
		"WARNING: CPU: 1 PID: 9 at kernel/kmod.c:136 __request_module+0x24b/0x3e0",
		"WARNING: CPU: 0 PID: 103 at kernel/module/kmod.c:143 __request_module+0x1ed/0x2a0",
		"WARNING: kernel/module/kmod.c:144 at __request_module+0x22a/0x2e0, CPU#1: kworker/u8:0/11",
	};
	char record[256];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(lines); i++) {
		snprintf(record, sizeof(record), "4,%u,%u,-;%s\n", 200 + i, 2000 + i, lines[i]);
		send_record(self->fds[1], record);
	}
	kmsg_reset(&self->scan, "__request_module");

	EXPECT_EQ(4, kmsg_scan(&self->scan));
	EXPECT_EQ(4, self->scan.nr_warnings);
	EXPECT_EQ(4, self->scan.nr_matches);
	EXPECT_TRUE(self->scan.warning_matches);
	ASSERT_EQ(4, self->scan.nr_lines);
	for (i = 0; i < ARRAY_SIZE(lines); i++)
		EXPECT_STREQ(lines[i], self->scan.lines[i]);
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

TEST_HARNESS_MAIN
