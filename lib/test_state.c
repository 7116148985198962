// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of lib/state.c: a /proc/modules, a knob and a block device
 * directory written to a temporary directory, read before and after, and
 * every difference named: a module deliberately left loaded among them.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "state.h"
#include "test_util.h"

#define MODULES_FOUND	"loop 32768 0 - Live 0x0000000000000000\n" \
			"configfs 57344 1 - Live 0x0000000000000000\n"

FIXTURE(state) {
	char *root;
	char modules[PATH_MAX], knob[PATH_MAX], block[PATH_MAX / 2];
	char devices[PATH_MAX];
	const char *watched[3];
	struct ma_state before, now;
	char diff[1024];
};

FIXTURE_SETUP(state)
{
	self->root = make_temp_dir();
	ASSERT_NE(NULL, self->root);
	snprintf(self->modules, sizeof(self->modules), "%s/modules", self->root);
	snprintf(self->knob, sizeof(self->knob), "%s/async_probe", self->root);
	snprintf(self->block, sizeof(self->block), "%s/block", self->root);
	snprintf(self->devices, sizeof(self->devices), "%s/nullb*", self->block);
	ASSERT_EQ(0, mkdir(self->block, 0755));
	write_file(self->modules, MODULES_FOUND);
	write_file(self->knob, "N\n");
	self->watched[0] = self->knob;
	self->watched[1] = self->devices;
	self->watched[2] = NULL;
	ASSERT_EQ(0, state_read(&self->before, self->modules, self->watched));
}

FIXTURE_TEARDOWN(state)
{
	remove_tree(self->root);
	free(self->root);
}

static int diff_now(struct _test_data_state *self)
{
	if (state_read(&self->now, self->modules, self->watched))
		return -1;
	return state_diff(&self->before, &self->now, NULL, self->diff,
			  sizeof(self->diff));
}

TEST_F(state, as_found_is_no_difference)
{
	EXPECT_EQ(2, self->before.nr_modules);
	EXPECT_STREQ("N", self->before.value[0]);
	EXPECT_STREQ("", self->before.value[1]);
	EXPECT_EQ(0, diff_now(self));
	EXPECT_STREQ("", self->diff);
}

TEST_F(state, a_module_left_loaded_is_named)
{
	write_file(self->modules,
		   "ma_plain 16384 0 - Live 0x0000000000000000 (O)\n" MODULES_FOUND);
	EXPECT_EQ(1, diff_now(self));
	EXPECT_STREQ("left loaded: ma_plain", self->diff);
}

TEST_F(state, a_module_unloaded_or_still_used_is_named)
{
	write_file(self->modules, "configfs 57344 2 - Live 0x0000000000000000\n");
	EXPECT_EQ(2, diff_now(self));
	EXPECT_STREQ("configfs used by 2, was 1; unloaded: loop", self->diff);
}

TEST_F(state, only_counted_modules_refcounts_compared)
{
	static const char * const counted[] = { "null_blk", "loop", NULL };

	write_file(self->modules, "loop 32768 1 - Live 0x0000000000000000\n"
		   "configfs 57344 3 - Live 0x0000000000000000\n");
	ASSERT_EQ(0, state_read(&self->now, self->modules, self->watched));
	EXPECT_EQ(1, state_diff(&self->before, &self->now, counted,
				self->diff, sizeof(self->diff)));
	EXPECT_STREQ("loop used by 1, was 0", self->diff);
}

TEST_F(state, a_module_another_loaded_is_no_difference)
{
	static const char * const counted[] = { "ma_plain", NULL };

	write_file(self->modules, "sg 40960 0 - Live 0x0000000000000000\n"
		   MODULES_FOUND);
	ASSERT_EQ(0, state_read(&self->now, self->modules, self->watched));
	EXPECT_EQ(0, state_diff(&self->before, &self->now, counted,
				self->diff, sizeof(self->diff)));
	write_file(self->modules, "ma_plain 16384 0 - Live 0x0000000000000000 (O)\n"
		   MODULES_FOUND);
	ASSERT_EQ(0, state_read(&self->now, self->modules, self->watched));
	EXPECT_EQ(1, state_diff(&self->before, &self->now, counted,
				self->diff, sizeof(self->diff)));
	EXPECT_STREQ("left loaded: ma_plain", self->diff);
}

TEST_F(state, a_knob_and_a_device_left_are_named)
{
	char dev[PATH_MAX];

	write_file(self->knob, "Y\n");
	snprintf(dev, sizeof(dev), "%s/nullb0", self->block);
	ASSERT_EQ(0, mkdir(dev, 0755));
	EXPECT_EQ(2, diff_now(self));
	EXPECT_NE(NULL, strstr(self->diff, "async_probe: Y, was N"));
	EXPECT_NE(NULL, strstr(self->diff, "nullb*: nullb0, was none"));
	unlink(self->knob);
	EXPECT_EQ(2, diff_now(self));
	EXPECT_NE(NULL, strstr(self->diff, "async_probe: absent, was N"));
}

TEST(meminfo_lines)
{
	char *dir = make_temp_dir();
	char path[PATH_MAX];
	long kb = 0;

	ASSERT_NE(NULL, dir);
	snprintf(path, sizeof(path), "%s/meminfo", dir);
	write_file(path, "MemTotal:        1000000 kB\n"
		   "MemAvailable:     900000 kB\n"
		   "Slab:              12345 kB\n");
	EXPECT_EQ(0, meminfo_kb(path, "Slab", &kb));
	EXPECT_EQ(12345, kb);
	EXPECT_EQ(0, meminfo_kb(path, "MemAvailable", &kb));
	EXPECT_EQ(900000, kb);
	EXPECT_NE(0, meminfo_kb(path, "Mem", &kb));
	remove_tree(dir);
	free(dir);
}

TEST(pcp_free_lines)
{
	char *dir = make_temp_dir();
	char path[PATH_MAX];
	long kb = 0, page_kb = sysconf(_SC_PAGESIZE) / 1024;

	ASSERT_NE(NULL, dir);
	snprintf(path, sizeof(path), "%s/zoneinfo", dir);
	write_file(path, "Node 0, zone    DMA32\n"
		   "  pages free     200000\n"
		   "  pagesets\n"
		   "    cpu: 0\n"
		   "              count: 25\n"
		   "              high:  378\n"
		   "              batch: 63\n"
		   "    cpu: 1\n"
		   "              count: 512\n"
		   "              high:  378\n"
		   "              batch: 63\n"
		   "  node_unreclaimable:  0\n");
	EXPECT_EQ(0, pcp_free_kb(path, &kb));
	EXPECT_EQ(537 * page_kb, kb);
	write_file(path, "Node 0, zone    DMA32\n  pages free     200000\n");
	EXPECT_NE(0, pcp_free_kb(path, &kb));
	remove_tree(dir);
	free(dir);
}

TEST_HARNESS_MAIN
