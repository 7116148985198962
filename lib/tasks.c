// SPDX-License-Identifier: GPL-2.0
/*
 * Tasks as /proc shows them (see tasks.h).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "tasks.h"

/* A stuck load's stack is a dozen frames; a runaway one is cut short. */
#define TASK_STACK_MAX_LINES	32

static const char *proc_root = "/proc";

void tasks_set_proc_root(const char *dir)
{
	proc_root = dir ? dir : "/proc";
}

static FILE *task_open(pid_t pid, const char *file)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%d/%s", proc_root, (int)pid, file);
	return fopen(path, "re");
}

/* /proc/<pid>/stat: "pid (comm) S ...", comm may contain spaces and ')'. */
static int task_stat(pid_t pid, char *comm, size_t len, char *state)
{
	char buf[512], *open, *close;
	FILE *f;
	size_t n;

	f = task_open(pid, "stat");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';

	open = strchr(buf, '(');
	close = strrchr(buf, ')');
	if (!open || !close || close < open || close[1] != ' ' || !close[2])
		return -EINVAL;
	if (comm) {
		*close = '\0';
		snprintf(comm, len, "%s", open + 1);
	}
	if (state)
		*state = close[2];
	return 0;
}

char task_state(pid_t pid)
{
	char state;

	if (task_stat(pid, NULL, 0, &state))
		return 0;
	return state;
}

int task_comm(pid_t pid, char *buf, size_t len)
{
	return task_stat(pid, buf, len, NULL);
}

void task_dump(pid_t pid)
{
	char comm[64], state, line[256];
	int lines = 0;
	FILE *f;

	if (task_stat(pid, comm, sizeof(comm), &state)) {
		diag("task %d: gone", (int)pid);
		return;
	}
	diag("task %d (%s) state %c", (int)pid, comm, state);

	f = task_open(pid, "stack");
	if (!f) {
		diag("  no kernel stack: %s", strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (++lines > TASK_STACK_MAX_LINES) {
			diag("  ...");
			break;
		}
		diag("  %s", line);
	}
	fclose(f);
}

int tasks_dump_blocked(void)
{
	struct dirent *de;
	int count = 0;
	DIR *dir;
	pid_t pid;

	dir = opendir(proc_root);
	if (!dir)
		return 0;
	while ((de = readdir(dir))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = atoi(de->d_name);
		if (task_state(pid) != 'D')
			continue;
		task_dump(pid);
		count++;
	}
	closedir(dir);
	return count;
}
