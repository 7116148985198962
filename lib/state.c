// SPDX-License-Identifier: GPL-2.0
/*
 * What a test must leave as it found it (see state.h).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "knob.h"
#include "state.h"

/* "name size refcount users state address": name and refcount. */
static int read_modules(struct ma_state *st, const char *file)
{
	char line[1024], refs[24], *end;
	struct state_module *m;
	FILE *f;

	st->nr_modules = 0;
	f = fopen(file, "re");
	if (!f)
		return -errno;
	while (st->nr_modules < MODLIST_MAX && fgets(line, sizeof(line), f)) {
		m = &st->modules[st->nr_modules];
		if (sscanf(line, "%55s %*s %23s", m->name, refs) != 2)
			continue;
		m->refs = strtol(refs, &end, 10);
		if (*end)
			m->refs = -1;
		st->nr_modules++;
	}
	fclose(f);
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(const char * const *)a, *(const char * const *)b);
}

/* The names in @pattern's directory that begin as its last part, sorted. */
static void read_dir_entries(const char *pattern, char *buf, size_t len)
{
	char dir[STATE_VALUE_LEN], *names[64];
	const char *slash = strrchr(pattern, '/');
	size_t prefix_len, n = 0, i, used = 0;
	struct dirent *e;
	DIR *d;

	buf[0] = '\0';
	if (!slash)
		return;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - pattern), pattern);
	prefix_len = strlen(slash + 1) - 1;	/* without the '*' */
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d)) && n < ARRAY_SIZE(names)) {
		if (e->d_name[0] == '.' ||
		    strncmp(e->d_name, slash + 1, prefix_len))
			continue;
		names[n] = strdup(e->d_name);
		if (names[n])
			n++;
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_names);
	for (i = 0; i < n; i++) {
		if (used < len)
			used += snprintf(buf + used, len - used, "%s%s",
					 i ? " " : "", names[i]);
		free(names[i]);
	}
}

int state_read(struct ma_state *st, const char *proc_modules,
	       const char * const watched[])
{
	const char *path;
	size_t n;
	int ret;

	st->nr_watched = 0;
	for (; watched && *watched && st->nr_watched < STATE_WATCHED_MAX;
	     watched++) {
		path = *watched;
		n = st->nr_watched++;
		st->watched[n] = path;
		if (path[0] && path[strlen(path) - 1] == '*') {
			read_dir_entries(path, st->value[n], STATE_VALUE_LEN);
			continue;
		}
		ret = sysfs_read(path, st->value[n], STATE_VALUE_LEN);
		if (ret)
			snprintf(st->value[n], STATE_VALUE_LEN, "absent");
	}
	return read_modules(st, proc_modules);
}

static const struct state_module *find_module(const struct ma_state *st,
					      const char *name)
{
	unsigned int i;

	for (i = 0; i < st->nr_modules; i++)
		if (!strcmp(st->modules[i].name, name))
			return &st->modules[i];
	return NULL;
}

/* Add one difference to @buf at *@used. */
static void __printf(4, 5) add(char *buf, size_t len, size_t *used,
			       const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*used >= len)
		return;
	if (*used) {
		n = snprintf(buf + *used, len - *used, "; ");
		*used += n > 0 ? n : 0;
		if (*used >= len)
			return;
	}
	va_start(ap, fmt);
	n = vsnprintf(buf + *used, len - *used, fmt, ap);
	va_end(ap);
	*used += n > 0 ? n : 0;
}

/* Is @name one of @counted (NULL: every module counts)? */
static bool counts(const char * const counted[], const char *name)
{
	char norm[MA_MODULE_NAME_LEN];

	if (!counted)
		return true;
	for (; *counted; counted++) {
		module_name_normalize(norm, *counted, sizeof(norm));
		if (!strcmp(norm, name))
			return true;
	}
	return false;
}

int state_diff(const struct ma_state *before, const struct ma_state *now,
	       const char * const counted[], char *buf, size_t len)
{
	const struct state_module *m, *was;
	size_t used = 0;
	unsigned int i;
	int count = 0;

	if (len)
		buf[0] = '\0';
	for (i = 0; i < now->nr_modules; i++) {
		m = &now->modules[i];
		was = find_module(before, m->name);
		if (!was && counted && !counts(counted, m->name)) {
			continue;	/* not the suite's: another loaded it */
		} else if (!was) {
			add(buf, len, &used, "left loaded: %s", m->name);
			count++;
		} else if (was->refs != m->refs && counts(counted, m->name)) {
			add(buf, len, &used, "%s used by %ld, was %ld",
			    m->name, m->refs, was->refs);
			count++;
		}
	}
	for (i = 0; i < before->nr_modules; i++) {
		if (find_module(now, before->modules[i].name))
			continue;
		add(buf, len, &used, "unloaded: %s", before->modules[i].name);
		count++;
	}
	for (i = 0; i < now->nr_watched && i < before->nr_watched; i++) {
		if (!strcmp(now->value[i], before->value[i]))
			continue;
		add(buf, len, &used, "%s: %s, was %s", now->watched[i],
		    now->value[i][0] ? now->value[i] : "none",
		    before->value[i][0] ? before->value[i] : "none");
		count++;
	}
	return count;
}

/*
 * The value of the first line of @file that sscanf() @fmt matches (one
 * %ld), or with @all the sum over every such line; 0 or -errno.
 */
static int scan_lines(const char *file, const char *fmt, bool all, long *out)
{
	char line[256];
	long v, sum = 0;
	int ret = -ENOENT;
	FILE *f;

	f = fopen(file, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, fmt, &v) != 1)
			continue;
		sum += v;
		ret = 0;
		if (!all)
			break;
	}
	fclose(f);
	if (!ret)
		*out = sum;
	return ret;
}

int meminfo_kb(const char *file, const char *key, long *kb)
{
	char fmt[64];

	snprintf(fmt, sizeof(fmt), "%s: %%ld", key);
	return scan_lines(file, fmt, false, kb);
}

/*
 * A page freed goes to its CPU's list first (a THP's too, from 5.13), and
 * leaves NR_FREE_PAGES, hence MemAvailable, until the list is drained to
 * the buddy allocator: MemAvailable moves by up to those lists' "high"
 * (megabytes) with no page leaked.
 */
int pcp_free_kb(const char *file, long *kb)
{
	long pages;
	int ret;

	ret = scan_lines(file, " count: %ld", true, &pages);
	if (!ret)
		*kb = pages * (sysconf(_SC_PAGESIZE) / 1024);
	return ret;
}
