// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel log, read from /dev/kmsg (see kmsg.h and
 * Documentation/ABI/testing/dev-kmsg).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "kmsg.h"

/* The kernel's limit for one record (CONSOLE_EXT_LOG_MAX is 8192). */
#define KMSG_RECORD_MAX		8192

static void kmsg_init(struct kmsg_scan *scan, int fd)
{
	memset(scan, 0, sizeof(*scan));
	scan->fd = fd;
}

int kmsg_open(struct kmsg_scan *scan, bool from_start)
{
	int fd;

	kmsg_init(scan, -1);
	fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (!from_start && lseek(fd, 0, SEEK_END) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	scan->fd = fd;
	return 0;
}

void kmsg_attach(struct kmsg_scan *scan, int fd)
{
	kmsg_init(scan, fd);
}

void kmsg_reset(struct kmsg_scan *scan, const char *pattern)
{
	kmsg_init(scan, scan->fd);
	scan->pattern = pattern;
}

static void kmsg_keep(struct kmsg_scan *scan, const char *msg, size_t len)
{
	if (scan->nr_lines == KMSG_MAX_LINES) {
		scan->nr_dropped++;
		return;
	}
	if (len >= KMSG_LINE_MAX)
		len = KMSG_LINE_MAX - 1;
	memcpy(scan->lines[scan->nr_lines], msg, len);
	scan->lines[scan->nr_lines][len] = '\0';
	scan->nr_lines++;
}

/* Does the @len bytes at @msg contain the NUL-terminated @needle? */
static bool contains(const char *msg, size_t len, const char *needle)
{
	size_t n = strlen(needle);

	if (!n)
		return false;
	for (; len >= n; msg++, len--)
		if (!memcmp(msg, needle, n))
			return true;
	return false;
}

void kmsg_scan_record(struct kmsg_scan *scan, const char *record, size_t len)
{
	const char *msg, *end;
	bool warning, hung, match;
	size_t msg_len;

	/* The message follows the header's ';' and ends at the first '\n'. */
	msg = memchr(record, ';', len);
	if (!msg)
		return;
	msg++;
	end = memchr(msg, '\n', record + len - msg);
	msg_len = (end ? end : record + len) - msg;

	scan->nr_records++;
	warning = msg_len >= 8 && !memcmp(msg, "WARNING:", 8);
	hung = msg_len >= 11 && !memcmp(msg, "INFO: task ", 11) &&
	       contains(msg, msg_len, " blocked for more than ");
	match = scan->pattern && contains(msg, msg_len, scan->pattern);
	if (warning)
		scan->nr_warnings++;
	if (match)
		scan->nr_matches++;
	if (hung)
		scan->nr_hung++;
	if (warning && match)
		scan->warning_matches = true;
	if (warning || hung || match)
		kmsg_keep(scan, msg, msg_len);
}

int kmsg_scan(struct kmsg_scan *scan)
{
	static char record[KMSG_RECORD_MAX];
	int count = 0;
	ssize_t n;

	if (scan->fd < 0)
		return -EBADF;
	for (;;) {
		n = read(scan->fd, record, sizeof(record));
		if (n > 0) {
			kmsg_scan_record(scan, record, n);
			count++;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EPIPE) {
			/* Overwritten before we read it: go on after the gap. */
			scan->nr_lost++;
			continue;
		}
		if (n == 0 || errno == EAGAIN)
			return count;
		return -errno;
	}
}

int kmsg_each(int fd, kmsg_fn fn, void *arg, int timeout_ms)
{
	static char record[KMSG_RECORD_MAX + 1];
	long long deadline = now_us() + timeout_ms * 1000LL;
	char *msg, *end;
	int count = 0;
	ssize_t n;

	while (now_us() < deadline) {
		n = read(fd, record, KMSG_RECORD_MAX);
		if (n < 0 && (errno == EINTR || errno == EPIPE))
			continue;	/* EPIPE: overwritten, go on after it */
		if (n < 0 && errno == EAGAIN)
			return count;
		if (n <= 0)
			return n ? -errno : count;
		record[n] = '\0';
		count++;
		msg = strchr(record, ';');
		if (!msg)
			continue;
		msg++;
		end = strchr(msg, '\n');
		if (end)
			*end = '\0';
		fn(arg, msg);
	}
	return count;
}

void kmsg_report(const struct kmsg_scan *scan, const char *prefix)
{
	unsigned int i;

	for (i = 0; i < scan->nr_lines; i++)
		diag("%s%s", prefix, scan->lines[i]);
	if (scan->nr_dropped)
		diag("%s(%u more lines)", prefix, scan->nr_dropped);
	if (scan->nr_lost)
		diag("%s(kernel log overwritten %u times while reading)",
		     prefix, scan->nr_lost);
}

void kmsg_close(struct kmsg_scan *scan)
{
	if (scan->fd >= 0)
		close(scan->fd);
	scan->fd = -1;
}
