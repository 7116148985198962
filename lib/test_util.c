// SPDX-License-Identifier: GPL-2.0
/*
 * What the host tests share (see test_util.h).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "diag.h"
#include "tasks.h"
#include "test_util.h"

char captured[16384];

void capture_diag(const char *line)
{
	size_t n = strlen(captured);

	snprintf(captured + n, sizeof(captured) - n, "%s\n", line);
}

void child_hangs(void *arg, struct child_report *report)
{
	for (;;)
		pause();
}

int run_captured(void (*fn)(const void *arg), const void *arg, char *out,
		 size_t len)
{
	int fds[2], status, null;
	size_t n = 0;
	ssize_t r;
	pid_t pid;

	if (pipe(fds))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		null = open("/dev/null", O_WRONLY);
		dup2(fds[1], STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		close(fds[0]);
		close(fds[1]);
		fn(arg);
		_exit(99);
	}
	close(fds[1]);
	while (n + 1 < len && (r = read(fds[0], out + n, len - n - 1)) > 0)
		n += r;
	out[n] = '\0';
	close(fds[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
}

char *make_temp_dir(void)
{
	char tmpl[] = "/tmp/ma_test_XXXXXX";
	char *dir = mkdtemp(tmpl);

	return dir ? strdup(dir) : NULL;
}

void remove_tree(const char *dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
}

long long elapsed_ms(long long since_us)
{
	return (now_us() - since_us) / 1000;
}

const char * const requester_stack[] = {
	"[<0>] call_usermodehelper_exec+0x14a/0x1a0",
	"[<0>] __request_module+0x1a5/0x3e0",
	"[<0>] ma_job_fn+0xa3/0xf0 [ma_request]",
	"[<0>] async_run_entry_fn+0x30/0x130",
	"[<0>] process_one_work+0x1c7/0x380",
	"[<0>] worker_thread+0x4d/0x380",
	"[<0>] kthread+0xda/0x100",
	"[<0>] ret_from_fork+0x22/0x30",
	NULL,
};

const char * const loader_stack[] = {
	"[<0>] async_synchronize_cookie_domain+0x114/0x150",
	"[<0>] do_init_module+0x17a/0x1f0",
	"[<0>] __do_sys_finit_module+0xac/0x120",
	"[<0>] do_syscall_64+0x5d/0xb0",
	"[<0>] entry_SYSCALL_64_after_hwframe+0x6e/0xd8",
	NULL,
};

const char * const unrelated_stack[] = {
	"[<0>] jbd2_log_wait_commit+0xbd/0x120",
	"[<0>] ext4_sync_file+0x1d4/0x380",
	"[<0>] do_fsync+0x38/0x70",
	NULL,
};

const char * const gated_job_stack[] = {
	"[<0>] ma_job_fn+0x40/0x90 [ma_gate]",
	"[<0>] async_run_entry_fn+0x30/0x130",
	"[<0>] process_one_work+0x1c7/0x380",
	NULL,
};

void make_task(struct task_stack *t, int pid, const char *comm,
	       const char *parent, const char *cmdline,
	       const char * const frames[])
{
	size_t i;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->ppid = pid - 1;
	t->state = 'D';
	snprintf(t->comm, sizeof(t->comm), "%s", comm);
	snprintf(t->parent_comm, sizeof(t->parent_comm), "%s", parent);
	snprintf(t->cmdline, sizeof(t->cmdline), "%s", cmdline);
	for (i = 0; frames[i]; i++)
		task_stack_add(t, frames[i]);
}

#ifndef KTAP_READER
#error "KTAP_READER: the path of tools/ktap/ktap, passed in by lib/Makefile"
#endif

/* In the child: "ktap CMD [ARG] FILE". */
static void exec_reader(const void *arg)
{
	const char * const *argv = arg;

	execv(argv[0], (char **)argv);
	_exit(127);
}

int ktap_ask(const char *doc, const char *cmd, const char *arg, char *answer,
	     size_t len)
{
	char path[] = "/tmp/ma_ktap_XXXXXX";
	const char *argv[5] = { KTAP_READER, cmd, arg ? arg : path,
				arg ? path : NULL, NULL };
	size_t n = strlen(doc);
	int fd, status = -1;

	answer[0] = '\0';
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	if (write(fd, doc, n) == (ssize_t)n)
		status = run_captured(exec_reader, argv, answer, len);
	close(fd);
	unlink(path);
	n = strlen(answer);
	if (n && answer[n - 1] == '\n')
		answer[n - 1] = '\0';
	return status;
}
