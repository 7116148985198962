// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of lib/module.c. Nothing is loaded: module names, a
 * modules.dep and a /proc/modules written to a temporary directory, and
 * loads and unloads of modules that do not exist.
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

#include "module.h"
#include "test_util.h"

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

/* More modules than the table holds, a users field too long: an error. */
TEST(module_list_too_long_is_an_error)
{
	static const char * const ours[] = { "ma_plain", NULL };
	char *dir = make_temp_dir();
	struct modlist *list = malloc(sizeof(*list));
	struct modlist *mine = malloc(sizeof(*mine));
	char path[PATH_MAX], users[300];
	unsigned int i;
	FILE *f;

	ASSERT_NE(NULL, dir);
	ASSERT_NE(NULL, list);
	ASSERT_NE(NULL, mine);
	snprintf(path, sizeof(path), "%s/modules", dir);
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	for (i = 0; i <= MODLIST_MAX; i++)
		fprintf(f, "m%u 16384 0 - Live 0x0000000000000000\n", i);
	fclose(f);
	EXPECT_EQ(-EOVERFLOW, modlist_read_file(list, path));
	list->nr = 0;
	EXPECT_EQ(-EOVERFLOW, modlist_ours(path, list, ours, mine));
	memset(users, 'u', sizeof(users) - 2);
	users[sizeof(users) - 2] = ',';
	users[sizeof(users) - 1] = '\0';
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fprintf(f, "ma_plain 16384 0 - Live 0x0000000000000000\n"
		   "configfs 57344 2 %s Live 0x0000000000000000\n", users);
	fclose(f);
	EXPECT_EQ(-EOVERFLOW, modlist_ours(path, list, ours, mine));
	remove_tree(dir);
	free(dir);
	free(list);
	free(mine);
}

/*
 * Of the modules loaded since: the suite's and what they use, not one
 * another loaded meanwhile (sg, by udev), nor one loaded before (loop).
 */
TEST(only_the_suites_modules_and_what_they_use_are_ours)
{
	static const char * const ours[] = { "ma_plain", "scsi_debug", "sd_mod", NULL };
	char *dir = make_temp_dir();
	struct modlist *before = malloc(sizeof(*before));
	struct modlist *mine = malloc(sizeof(*mine));
	char path[PATH_MAX];

	ASSERT_NE(NULL, dir);
	ASSERT_NE(NULL, before);
	ASSERT_NE(NULL, mine);
	snprintf(path, sizeof(path), "%s/modules", dir);
	write_file(path, "loop 32768 0 - Live 0x0000000000000000\n");
	ASSERT_EQ(0, modlist_read_file(before, path));
	write_file(path,
		   "sg 40960 0 - Live 0x0000000000000000\n"
		   "sd_mod 61440 0 - Live 0x0000000000000000\n"
		   "t10_pi 16384 1 sd_mod, Live 0x0000000000000000\n"
		   "crc64_rocksoft 16384 1 t10_pi, Live 0x0000000000000000\n"
		   "scsi_debug 241664 0 - Live 0x0000000000000000\n"
		   "loop 32768 1 scsi_debug, Live 0x0000000000000000\n");
	ASSERT_EQ(0, modlist_ours(path, before, ours, mine));
	EXPECT_EQ(4, mine->nr);
	EXPECT_TRUE(modlist_has(mine, "sd_mod"));
	EXPECT_TRUE(modlist_has(mine, "scsi_debug"));
	EXPECT_TRUE(modlist_has(mine, "t10_pi"));
	EXPECT_TRUE(modlist_has(mine, "crc64_rocksoft"));
	EXPECT_FALSE(modlist_has(mine, "sg"));
	EXPECT_FALSE(modlist_has(mine, "loop"));
	remove_tree(dir);
	free(dir);
	free(before);
	free(mine);
}

/* .modinfo as a .ko holds it, between other sections' bytes. */
static const char modinfo[] =
	"\177ELF...vermagic=not-at-a-string-start\0"
	"license=GPL\0vermagic=6.1.0-9-amd64 SMP preempt mod_unload \0"
	"name=ma_plain\0";

TEST(vermagic_from_a_module_file)
{
	char *dir = make_temp_dir();
	char path[PATH_MAX], vermagic[64];
	FILE *f;

	ASSERT_NE(NULL, dir);
	snprintf(path, sizeof(path), "%s/ma_plain.ko", dir);
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fwrite(modinfo, 1, sizeof(modinfo), f);
	fclose(f);
	ASSERT_EQ(0, module_file_vermagic(path, vermagic, sizeof(vermagic)));
	EXPECT_STREQ("6.1.0-9-amd64 SMP preempt mod_unload ", vermagic);

	write_file(path, "no modinfo here");
	ASSERT_EQ(0, module_file_vermagic(path, vermagic, sizeof(vermagic)));
	EXPECT_STREQ("", vermagic);
	EXPECT_EQ(-ENOENT, module_file_vermagic("/nonexistent/ma_plain.ko",
						vermagic, sizeof(vermagic)));
	remove_tree(dir);
	free(dir);
}

TEST(loading_a_missing_file_fails_in_the_child)
{
	EXPECT_EQ(-ENOENT, module_load("/nonexistent/ma_plain.ko", "", 5000));
}

/*
 * A modprobe slower than a child's exit bound (a second; null_blk's load
 * under a busy TCG host) is waited for to its exit, and its status kept.
 */
TEST(a_slow_modprobe_is_waited_for)
{
	static const char * const argv[] = { "modprobe", "null_blk", NULL };
	char *dir = make_temp_dir();
	char path[PATH_MAX];

	ASSERT_NE(NULL, dir);
	snprintf(path, sizeof(path), "%s/modprobe", dir);
	write_file(path, "#!/bin/sh\nsleep 1.5\nexit 3\n");
	ASSERT_EQ(0, chmod(path, 0755));
	modprobe_set_path(path);
	EXPECT_EQ(3, modprobe(argv, 5000));
	modprobe_set_path(NULL);
	remove_tree(dir);
	free(dir);
}

TEST(unloading_a_module_that_is_not_there)
{
	int ret;

	/* Without CONFIG_MODULES there is no /proc/modules, nor the syscall. */
	if (access("/proc/modules", F_OK))
		SKIP(return, "this kernel has no module support");
	ret = module_unload("ma_not_loaded_anywhere", 5000);
	if (ret == -EPERM)
		SKIP(return, "no CAP_SYS_MODULE");
	EXPECT_EQ(-ENOENT, ret);
}

TEST_HARNESS_MAIN
