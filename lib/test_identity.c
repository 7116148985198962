// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of lib/identity.c: the build ID found among ELF notes laid out
 * as a kernel's .notes section lays them out, and the identity line.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "diag.h"
#include "identity.h"
#include "test_util.h"

/* A 20-byte build ID (ld --build-id=sha1) and its hex. */
static const unsigned char id[20] = {
	0x6a, 0x2b, 0x4a, 0xc7, 0x75, 0x85, 0xb8, 0xcf, 0x10, 0x2c,
	0xba, 0x77, 0x13, 0x00, 0xe5, 0x73, 0xc8, 0x48, 0x9b, 0x69,
};

static const char id_hex[] = "6a2b4ac77585b8cf102cba771300e573c8489b69";

struct notes {
	unsigned char buf[1024];
	size_t len;
};

/* Append a note: its header, then name and descriptor, each padded to 4. */
static void add_note(struct notes *n, const char *name, unsigned int type,
		     const void *desc, unsigned int desc_size)
{
	struct note_header nh = {
		.name_size = strlen(name) + 1,
		.desc_size = desc_size,
		.type = type,
	};

	memcpy(n->buf + n->len, &nh, sizeof(nh));
	n->len += sizeof(nh);
	memcpy(n->buf + n->len, name, nh.name_size);
	n->len += (nh.name_size + 3) & ~3u;
	memcpy(n->buf + n->len, desc, desc_size);
	n->len += (desc_size + 3) & ~3u;
}

/* The notes written to a file in a fresh directory; its path in @path. */
static void write_notes(const struct notes *n, char *dir, char *path)
{
	FILE *f;

	snprintf(path, PATH_MAX, "%s/notes", dir);
	f = fopen(path, "w");
	if (!f || fwrite(n->buf, 1, n->len, f) != n->len || fclose(f))
		abort();
}

FIXTURE(notes) {
	struct notes n;
	char *dir;
	char path[PATH_MAX];
	char hex[2 * 64 + 1];
};

FIXTURE_SETUP(notes)
{
	memset(&self->n, 0, sizeof(self->n));
	self->dir = make_temp_dir();
	ASSERT_NE(NULL, self->dir);
	/* Xen's notes come first in x86's vmlinux (PVH entry and others). */
	add_note(&self->n, "Xen", 6, "linux", 6);
	add_note(&self->n, "Xen", 0x12, "\0\0\0\1", 4);
}

FIXTURE_TEARDOWN(notes)
{
	remove_tree(self->dir);
	free(self->dir);
}

TEST_F(notes, build_id_after_other_notes)
{
	/* A GNU note of another type, and a non-GNU note of type 3. */
	add_note(&self->n, "GNU", NT_GNU_ABI_TAG, "\0\0\0\0\3\0\0\0", 8);
	add_note(&self->n, "Xen", NT_GNU_BUILD_ID, "\1\2\3\4", 4);
	add_note(&self->n, "GNU", NT_GNU_BUILD_ID, id, sizeof(id));
	add_note(&self->n, "Linux", 0x100, "\0\0\0\0", 4);
	write_notes(&self->n, self->dir, self->path);

	ASSERT_EQ(0, kernel_build_id(self->path, self->hex, sizeof(self->hex)));
	EXPECT_STREQ(id_hex, self->hex);
}

TEST_F(notes, no_build_id_is_enodata)
{
	write_notes(&self->n, self->dir, self->path);
	EXPECT_EQ(-ENODATA, kernel_build_id(self->path, self->hex, sizeof(self->hex)));
}

TEST_F(notes, note_past_the_end_is_einval)
{
	add_note(&self->n, "GNU", NT_GNU_BUILD_ID, id, sizeof(id));
	self->n.len -= 4;
	write_notes(&self->n, self->dir, self->path);
	EXPECT_EQ(-EINVAL, kernel_build_id(self->path, self->hex, sizeof(self->hex)));
}

TEST_F(notes, short_buffer_is_enospc)
{
	add_note(&self->n, "GNU", NT_GNU_BUILD_ID, id, sizeof(id));
	write_notes(&self->n, self->dir, self->path);
	EXPECT_EQ(-ENOSPC, kernel_build_id(self->path, self->hex, 2 * sizeof(id)));
}

TEST_F(notes, missing_file_is_enoent)
{
	snprintf(self->path, sizeof(self->path), "%s/none", self->dir);
	EXPECT_EQ(-ENOENT, kernel_build_id(self->path, self->hex, sizeof(self->hex)));
}

TEST_F(notes, identity_line_names_release_and_build_id)
{
	struct utsname u;
	char want[512];

	ASSERT_EQ(0, uname(&u));
	add_note(&self->n, "GNU", NT_GNU_BUILD_ID, id, sizeof(id));
	write_notes(&self->n, self->dir, self->path);
	captured[0] = '\0';
	diag_set_hook(capture_diag);
	kernel_identity(self->path);
	diag_set_hook(NULL);
	snprintf(want, sizeof(want), "kernel: %s build-id %s\n", u.release, id_hex);
	EXPECT_STREQ(want, captured);
}

TEST_F(notes, identity_line_says_why_there_is_none)
{
	struct utsname u;
	char want[PATH_MAX + 512];

	ASSERT_EQ(0, uname(&u));
	snprintf(self->path, sizeof(self->path), "%s/none", self->dir);
	captured[0] = '\0';
	diag_set_hook(capture_diag);
	kernel_identity(self->path);
	diag_set_hook(NULL);
	snprintf(want, sizeof(want),
		 "kernel: %s build-id unknown (%s: No such file or directory)\n",
		 u.release, self->path);
	EXPECT_STREQ(want, captured);
}

/* The host's own kernel, where its notes can be read: a 20-byte SHA-1 ID. */
TEST(host_kernel_build_id)
{
	char hex[2 * 64 + 1];
	int err;

	if (access(KERNEL_NOTES, R_OK))
		SKIP(return, "%s: %s", KERNEL_NOTES, strerror(errno));
	err = kernel_build_id(KERNEL_NOTES, hex, sizeof(hex));
	if (err == -ENODATA)
		SKIP(return, "the host kernel has no build ID note");
	ASSERT_EQ(0, err);
	EXPECT_EQ(40, strlen(hex));
	EXPECT_EQ(strlen(hex), strspn(hex, "0123456789abcdef"));
}

TEST_HARNESS_MAIN
