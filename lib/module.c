// SPDX-License-Identifier: GPL-2.0
/*
 * Loading and unloading kernel modules with a bound (see module.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "diag.h"
#include "knob.h"
#include "module.h"

/* A child that did not die on SIGKILL within this is left behind. */
#define MODULE_ABANDON_MS	1000

static void load_in_child(void *arg, struct child_report *report)
{
	struct module_load *load = arg;
	int fd;

	fd = open(load->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		report->ret = -1;
		report->err = errno;
		return;
	}
	report->ret = syscall(__NR_finit_module, fd,
			      load->params ? load->params : "", 0);
	report->err = report->ret ? errno : 0;
	report->end_us = now_us();
	if (load->knob_after && !report->ret)
		report->has_value = !knob_read_long(load->name,
						    load->knob_after,
						    &report->value);
}

int module_load_start(struct module_load *load)
{
	module_name_from_path(load->name, load->path, sizeof(load->name));
	return child_start(&load->child, load_in_child, load);
}

enum child_status module_load_wait(struct module_load *load, int timeout_ms)
{
	return child_wait(&load->child, timeout_ms);
}

int module_load_result(const struct module_load *load)
{
	const struct child *c = &load->child;

	switch (c->status) {
	case CHILD_REPORTED:
		return c->report.ret ? -c->report.err : 0;
	case CHILD_RUNNING:
		return -EINPROGRESS;
	case CHILD_DIED:
		return -ECHILD;
	case CHILD_ERROR:
	default:
		return -EIO;
	}
}

int module_load(const char *path, const char *params, int timeout_ms)
{
	struct module_load load = { .path = path, .params = params };
	int ret;

	ret = module_load_start(&load);
	if (ret)
		return ret;
	if (module_load_wait(&load, timeout_ms) == CHILD_RUNNING) {
		child_describe(&load.child, "load of a module");
		child_abandon(&load.child, MODULE_ABANDON_MS);
		return -ETIMEDOUT;
	}
	return module_load_result(&load);
}

static void unload_in_child(void *arg, struct child_report *report)
{
	const char *name = arg;

	report->ret = syscall(__NR_delete_module, name, O_NONBLOCK);
	report->err = report->ret ? errno : 0;
}

int module_unload(const char *name, int timeout_ms)
{
	struct child c;
	int ret;

	ret = child_start(&c, unload_in_child, (void *)name);
	if (ret)
		return ret;
	switch (child_wait(&c, timeout_ms)) {
	case CHILD_REPORTED:
		return c.report.ret ? -c.report.err : 0;
	case CHILD_RUNNING:
		child_describe(&c, "unload of a module");
		child_abandon(&c, MODULE_ABANDON_MS);
		return -ETIMEDOUT;
	case CHILD_DIED:
		return -ECHILD;
	case CHILD_ERROR:
	default:
		return -EIO;
	}
}

void module_name_normalize(char *dst, const char *src, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len && src[i]; i++)
		dst[i] = src[i] == '-' ? '_' : src[i];
	if (len)
		dst[i] = '\0';
}

void module_name_from_path(char *dst, const char *path, size_t len)
{
	const char *base = strrchr(path, '/');
	char name[PATH_MAX];

	snprintf(name, sizeof(name), "%s", base ? base + 1 : path);
	name[strcspn(name, ".")] = '\0';	/* ".ko", ".ko.xz", ... */
	module_name_normalize(dst, name, len);
}

int module_state(const char *name, char *buf, size_t len)
{
	char path[PATH_MAX];
	int n;

	n = snprintf(path, sizeof(path), "%s/%s/initstate", knob_root(), name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	return sysfs_read(path, buf, len);
}

bool module_is_live(const char *name)
{
	char state[16];

	return !module_state(name, state, sizeof(state)) &&
	       !strcmp(state, "live");
}

bool modules_file_lists(const char *file, const char *name)
{
	char want[MA_MODULE_NAME_LEN], have[MA_MODULE_NAME_LEN];
	char line[1024];
	bool found = false;
	FILE *f;

	f = fopen(file, "re");
	if (!f)
		return false;
	module_name_normalize(want, name, sizeof(want));
	while (!found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, ":\n")] = '\0';
		if (!strstr(line, ".ko"))
			continue;
		module_name_from_path(have, line, sizeof(have));
		found = !strcmp(want, have);
	}
	fclose(f);
	return found;
}

/* Read the whole file at @path: a malloc()ed buffer, NUL-terminated. */
static char *file_contents(const char *path, size_t *size, int *err)
{
	struct stat st;
	char *data;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		*err = -errno;
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	data = malloc(st.st_size + 1);
	*size = 0;
	while (data && *size < (size_t)st.st_size) {
		n = read(fd, data + *size, st.st_size - *size);
		if (n <= 0)
			break;
		*size += n;
	}
	close(fd);
	if (!data)
		*err = -ENOMEM;
	else
		data[*size] = '\0';
	return data;
}

int module_file_vermagic(const char *path, char *buf, size_t len)
{
	static const char key[] = "vermagic=";
	char *data, *at;
	size_t size;
	int err = 0;

	data = file_contents(path, &size, &err);
	if (!data)
		return err;
	buf[0] = '\0';
	/* .modinfo holds NUL-separated "key=value" strings. */
	for (at = data; (at = memmem(at, data + size - at, key, sizeof(key) - 1));
	     at++) {
		if (at == data || at[-1] == '\0') {
			snprintf(buf, len, "%s", at + sizeof(key) - 1);
			break;
		}
	}
	free(data);
	return 0;
}

static bool modules_dir_lists(const char *file, const char *name)
{
	char path[PATH_MAX];
	struct utsname u;

	if (uname(&u))
		return false;
	snprintf(path, sizeof(path), "/lib/modules/%s/%s", u.release, file);
	return modules_file_lists(path, name);
}

bool module_available(const char *name)
{
	return modules_dir_lists("modules.dep", name);
}

bool module_builtin(const char *name)
{
	return modules_dir_lists("modules.builtin", name);
}

static const char *modprobe_path;

void modprobe_set_path(const char *path)
{
	modprobe_path = path;
}

/*
 * Runs modprobe in a process of its own and reports its exit status: the
 * report pipe must stay open until modprobe has exited, not close at its
 * exec (a modprobe slower than the child's exit bound read as done).
 */
static void exec_in_child(void *arg, struct child_report *report)
{
	char *const *argv = arg;
	char path[PATH_MAX];
	int status;
	pid_t pid;

	/* Run the modprobe the kernel itself would run. */
	if (modprobe_path)
		snprintf(path, sizeof(path), "%s", modprobe_path);
	else if (sysfs_read("/proc/sys/kernel/modprobe", path, sizeof(path)) ||
		 !path[0])
		snprintf(path, sizeof(path), "/sbin/modprobe");
	pid = fork();
	if (pid == 0) {
		/* Its messages are diagnostics, never part of the runner's KTAP. */
		dup2(STDERR_FILENO, STDOUT_FILENO);
		execv(path, argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		report->ret = -1;
		report->err = errno;
		return;
	}
	report->ret = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	report->err = ECHILD;
}

int modprobe(const char *const argv[], int timeout_ms)
{
	struct child c;
	int ret;

	ret = child_start(&c, exec_in_child, (void *)argv);
	if (ret)
		return ret;
	switch (child_wait(&c, timeout_ms)) {
	case CHILD_REPORTED:	/* modprobe exited, or could not run */
		return c.report.ret >= 0 ? c.report.ret : -c.report.err;
	case CHILD_DIED:
		return -ECHILD;
	case CHILD_RUNNING:
		child_describe(&c, "modprobe");
		child_abandon(&c, MODULE_ABANDON_MS);
		return -ETIMEDOUT;
	case CHILD_ERROR:
	default:
		return -EIO;
	}
}

int modlist_read_file(struct modlist *list, const char *file)
{
	char line[1024];
	int ret = 0;
	FILE *f;

	list->nr = 0;
	f = fopen(file, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\t\n ")] = '\0';
		if (!line[0] || strlen(line) >= MA_MODULE_NAME_LEN)
			continue;
		if (list->nr == MODLIST_MAX) {
			ret = -EOVERFLOW;	/* never a list cut short */
			break;
		}
		strcpy(list->name[list->nr++], line);
	}
	fclose(f);
	return ret;
}

int modlist_read(struct modlist *list)
{
	return modlist_read_file(list, "/proc/modules");
}

bool modlist_has(const struct modlist *list, const char *name)
{
	char want[MA_MODULE_NAME_LEN];
	unsigned int i;

	module_name_normalize(want, name, sizeof(want));
	for (i = 0; i < list->nr; i++)
		if (!strcmp(list->name[i], want))
			return true;
	return false;
}

int modules_dump_loading(void)
{
	char line[1024], name[MA_MODULE_NAME_LEN], state[16];
	int count = 0;
	FILE *f;

	f = fopen("/proc/modules", "re");
	if (!f)
		return 0;
	/* "name size refcount users state address [taints]" */
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%55s %*s %*s %*s %15s", name, state) != 2 ||
		    strcmp(state, "Loading"))
			continue;
		diag("module %s: still loading", name);
		count++;
	}
	fclose(f);
	return count;
}

/* Is @name (normalized) one of @names (NULL-ended)? */
static bool name_in(const char * const names[], const char *name)
{
	char norm[MA_MODULE_NAME_LEN];

	for (; names && *names; names++) {
		module_name_normalize(norm, *names, sizeof(norm));
		if (!strcmp(norm, name))
			return true;
	}
	return false;
}

/* Does the "used by" field @users ("a,b," or "-") name one of @mine? */
static bool used_by_one_of(const char *users, const struct modlist *mine)
{
	char user[MA_MODULE_NAME_LEN];
	size_t n;

	while (*users) {
		n = strcspn(users, ",");
		if (n && n < sizeof(user)) {
			memcpy(user, users, n);
			user[n] = '\0';
			if (modlist_has(mine, user))
				return true;
		}
		users += n + !!users[n];
	}
	return false;
}

int modlist_ours(const char *file, const struct modlist *before,
		 const char * const ours[], struct modlist *mine)
{
	static struct modlist now;
	static char users[MODLIST_MAX][256];
	char line[1024];
	bool grew = true;
	unsigned int i;
	int ret = 0;
	FILE *f;

	mine->nr = 0;
	now.nr = 0;
	f = fopen(file, "re");
	if (!f)
		return -errno;
	/*
	 * "name size refcount users state address [taints]": a list too long
	 * for the table, or a line or a users field too long for its buffer,
	 * is an error, never a module or a user left out.
	 */
	while (!ret && fgets(line, sizeof(line), f)) {
		if ((!strchr(line, '\n') && !feof(f)) || now.nr == MODLIST_MAX) {
			ret = -EOVERFLOW;
			break;
		}
		users[now.nr][0] = '\0';
		if (sscanf(line, "%55s %*s %*s %255s", now.name[now.nr],
			   users[now.nr]) != 2)
			continue;
		if (strlen(users[now.nr]) == sizeof(users[0]) - 1)
			ret = -EOVERFLOW;	/* the field may go on */
		else if (!modlist_has(before, now.name[now.nr]))
			now.nr++;
	}
	fclose(f);
	if (ret)
		return ret;
	for (i = 0; i < now.nr; i++)
		if (name_in(ours, now.name[i]))
			strcpy(mine->name[mine->nr++], now.name[i]);
	/* What they use, and what that uses, until nothing is added. */
	while (grew) {
		grew = false;
		for (i = 0; i < now.nr; i++) {
			if (modlist_has(mine, now.name[i]) ||
			    !used_by_one_of(users[i], mine))
				continue;
			strcpy(mine->name[mine->nr++], now.name[i]);
			grew = true;
		}
	}
	return 0;
}

int modlist_unload_new(const struct modlist *before, const char * const ours[],
		       int timeout_ms)
{
	static struct modlist now, mine;
	long long end = now_us() + timeout_ms * 1000LL;
	bool progress = true, busy = false, last_round = false;
	unsigned int i;
	int left = 0, ret;

	/*
	 * Rounds until one unloads nothing: dependencies go before users. A
	 * module still referenced (EAGAIN: its devices' asynchronous probe may
	 * hold it a while after the load returned) is tried again a
	 * millisecond later, until @timeout_ms.
	 */
	if (modlist_ours("/proc/modules", before, ours, &mine))
		return -1;
	while (!last_round) {
		last_round = !progress && !(busy && now_us() < end);
		if (!progress && busy)
			sleep_ms(1);
		progress = false;
		busy = false;
		left = 0;
		if (modlist_read(&now))
			return -1;
		for (i = 0; i < now.nr; i++) {
			if (!modlist_has(&mine, now.name[i]))
				continue;
			ret = module_unload(now.name[i], timeout_ms);
			if (!ret) {
				progress = true;
				continue;
			}
			left++;
			busy |= ret == -EAGAIN;
			if (last_round || ret == -ETIMEDOUT)
				diag("left loaded: %s (%s)", now.name[i],
				     strerror(-ret));
			if (ret == -ETIMEDOUT)
				return ret;	/* the kernel is stuck */
		}
		if (!left)
			break;
	}
	return left;
}
