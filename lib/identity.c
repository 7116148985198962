// SPDX-License-Identifier: GPL-2.0
/*
 * Which kernel runs (see identity.h).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "diag.h"
#include "identity.h"

/* A vmlinux's .notes are a few hundred bytes (Xen's, GNU's, Linux's). */
#define NOTES_MAX	65536

/* The whole file @path in @buf, at most @len bytes; its size or -errno. */
static ssize_t read_notes(const char *path, unsigned char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (got < len) {
		n = read(fd, buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			n = -errno;
			close(fd);
			return n;
		}
		if (!n)
			break;
		got += n;
	}
	close(fd);
	return got;
}

/* A note's name and descriptor are each padded to 4 bytes. */
static size_t note_align(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

int kernel_build_id(const char *notes, char *hex, size_t len)
{
	static unsigned char buf[NOTES_MAX];
	const unsigned char *desc;
	ssize_t size;
	size_t off = 0, name_len, desc_len, i;
	struct note_header nh;

	size = read_notes(notes, buf, sizeof(buf));
	if (size < 0)
		return size;
	while (off + sizeof(nh) <= (size_t)size) {
		memcpy(&nh, buf + off, sizeof(nh));
		off += sizeof(nh);
		if (nh.name_size > (size_t)size || nh.desc_size > (size_t)size)
			return -EINVAL;
		name_len = note_align(nh.name_size);
		desc_len = note_align(nh.desc_size);
		if (name_len > (size_t)size - off ||
		    desc_len > (size_t)size - off - name_len)
			return -EINVAL;
		desc = buf + off + name_len;
		if (nh.type == NT_GNU_BUILD_ID &&
		    nh.name_size == sizeof(ELF_NOTE_GNU) &&
		    !memcmp(buf + off, ELF_NOTE_GNU, sizeof(ELF_NOTE_GNU))) {
			if (!nh.desc_size)
				return -EINVAL;
			if (len < 2 * (size_t)nh.desc_size + 1)
				return -ENOSPC;
			for (i = 0; i < nh.desc_size; i++)
				snprintf(hex + 2 * i, 3, "%02x", desc[i]);
			return 0;
		}
		off += name_len + desc_len;
	}
	return -ENODATA;
}

void kernel_identity(const char *notes)
{
	struct utsname u;
	char hex[2 * 64 + 1];
	const char *release = "unknown";
	int err;

	if (!uname(&u))
		release = u.release;
	err = kernel_build_id(notes, hex, sizeof(hex));
	if (err)
		diag("kernel: %s build-id unknown (%s: %s)", release, notes,
		     err == -ENODATA ? "no GNU build ID note" : strerror(-err));
	else
		diag("kernel: %s build-id %s", release, hex);
}
