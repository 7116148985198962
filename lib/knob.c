// SPDX-License-Identifier: GPL-2.0
/*
 * Module parameters as files (see knob.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "knob.h"

static const char *knob_dir = "/sys/module";

void knob_set_root(const char *dir)
{
	knob_dir = dir ? dir : "/sys/module";
}

const char *knob_root(void)
{
	return knob_dir;
}

/* Append @s at @*at in @buf of @len; false if it does not fit. */
static bool path_add(char *buf, size_t len, size_t *at, const char *s)
{
	size_t n = strlen(s);

	if (n >= len - *at)
		return false;
	memcpy(buf + *at, s, n + 1);
	*at += n;
	return true;
}

/* By strlen() and memcpy() alone: the signal handler builds paths too. */
int knob_path(char *buf, size_t len, const char *module, const char *knob)
{
	size_t at = 0;

	if (!len)
		return -ENAMETOOLONG;
	if (!path_add(buf, len, &at, knob_dir) ||
	    !path_add(buf, len, &at, "/") ||
	    !path_add(buf, len, &at, module) ||
	    (knob && (!path_add(buf, len, &at, "/parameters/") ||
		      !path_add(buf, len, &at, knob))))
		return -ENAMETOOLONG;
	return 0;
}

int sysfs_read(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	if (!len)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	close(fd);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

int sysfs_read_selected(const char *path, char *buf, size_t len)
{
	char line[256], *open, *close;
	int ret = sysfs_read(path, line, sizeof(line));

	if (ret)
		return ret;
	open = strchr(line, '[');
	close = open ? strchr(open, ']') : NULL;
	if (!close)
		return -EINVAL;
	*close = '\0';
	snprintf(buf, len, "%s", open + 1);
	return 0;
}

int sysfs_write(const char *path, const char *value)
{
	size_t len = strlen(value);
	ssize_t n;
	int fd;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, value, len);
	if (n < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	if (close(fd))
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

bool knob_exists(const char *module, const char *knob)
{
	char path[PATH_MAX];

	if (knob_path(path, sizeof(path), module, knob))
		return false;
	return access(path, F_OK) == 0;
}

int knob_read(const char *module, const char *knob, char *buf, size_t len)
{
	char path[PATH_MAX];
	int ret;

	ret = knob_path(path, sizeof(path), module, knob);
	if (ret)
		return ret;
	return sysfs_read(path, buf, len);
}

int knob_read_long(const char *module, const char *knob, long *value)
{
	char buf[64], *end;
	long v;
	int ret;

	ret = knob_read(module, knob, buf, sizeof(buf));
	if (ret)
		return ret;
	errno = 0;
	v = strtol(buf, &end, 0);
	if (errno || end == buf || *end)
		return -EINVAL;
	*value = v;
	return 0;
}

int knob_write(const char *module, const char *knob, const char *value)
{
	char path[PATH_MAX];
	int ret;

	ret = knob_path(path, sizeof(path), module, knob);
	if (ret)
		return ret;
	return sysfs_write(path, value);
}

int knob_wait_long(const char *module, const char *knob, long want,
		   int timeout_ms, long *last)
{
	long long deadline = now_us() + timeout_ms * 1000LL;
	long value = LONG_MIN;
	long v;

	for (;;) {
		if (!knob_read_long(module, knob, &v)) {
			value = v;
			if (v == want)
				break;
		}
		if (now_us() >= deadline) {
			if (last)
				*last = value;
			return -ETIMEDOUT;
		}
		sleep_ms(KNOB_POLL_STEP_MS);
	}
	if (last)
		*last = value;
	return 0;
}
