// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of lib/knob.c against a temporary directory standing in for
 * /sys/module: paths, reads and writes, bounded waits.
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
#include "knob.h"
#include "test_util.h"

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
	ASSERT_EQ(0, knob_path(path, sizeof(path), "ma_fake", NULL));
	EXPECT_STREQ("/sys/module/ma_fake", path);
}

/* A path one byte too long for the buffer is refused, never cut short. */
TEST_F(knobs, path_too_long_is_refused)
{
	static const char want[] = "/sys/module/ma_fake/parameters/done";
	char path[sizeof(want)];

	knob_set_root(NULL);
	ASSERT_EQ(0, knob_path(path, sizeof(path), "ma_fake", "done"));
	EXPECT_STREQ(want, path);
	EXPECT_EQ(-ENAMETOOLONG, knob_path(path, sizeof(path) - 1, "ma_fake",
					   "done"));
	EXPECT_EQ(-ENAMETOOLONG, knob_path(path, 0, "ma_fake", "done"));
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

/* The choice in brackets, as a scheduler or pm_test lists it. */
TEST_F(knobs, the_selected_choice_is_the_bracketed_one)
{
	char buf[16];

	write_file(self->path, "none [freezer] devices\n");
	ASSERT_EQ(0, sysfs_read_selected(self->path, buf, sizeof(buf)));
	EXPECT_STREQ("freezer", buf);
	write_file(self->path, "none freezer\n");
	EXPECT_EQ(-EINVAL, sysfs_read_selected(self->path, buf, sizeof(buf)));
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

TEST_HARNESS_MAIN
