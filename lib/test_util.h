/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the library's host tests (lib/test_*.c) and the runner's
 * (../test_module_async.c) share: temporary files, captured diagnostics,
 * the stacks of a stock kernel's deadlock, and a structural reading of a
 * KTAP document. No kernel module is loaded by any of them.
 */
#ifndef MA_TEST_UTIL_H
#define MA_TEST_UTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "tasks.h"

/* Slack for a loaded host: a bound must hold within this much. */
#define SLACK_MS	1000

/* diag() lines, when capture_diag() is the hook, one a line. */
extern char captured[16384];
void capture_diag(const char *line);

/* A child_fn (child.h) that never returns: the watchdog must end it. */
struct child_report;
void child_hangs(void *arg, struct child_report *report);

/*
 * Run @fn(@arg) in a child, its stdout into @out (NUL-terminated, @len
 * bytes at most), its stderr (usage texts: not under test) to /dev/null.
 * @fn exits; if it returns, the child exits 99. Returns the child's exit
 * status, or -1.
 */
int run_captured(void (*fn)(const void *arg), const void *arg, char *out,
		 size_t len);

void write_file(const char *path, const char *text);
char *make_temp_dir(void);
void remove_tree(const char *dir);
long long elapsed_ms(long long since_us);

/* As the stock Debian 6.1 kernel showed them in request_module_from_async_*. */
extern const char * const requester_stack[];
extern const char * const loader_stack[];
/* A task blocked elsewhere, and a job held on its gate. */
extern const char * const unrelated_stack[];
extern const char * const gated_job_stack[];

/* A blocked task with @frames (NULL-terminated) as its stack. */
void make_task(struct task_stack *t, int pid, const char *comm,
	       const char *parent, const char *cmdline,
	       const char * const frames[]);

/*
 * A KTAP document read for its structure only: version line, plan, result
 * lines with their number, name and directive. The project's one KTAP
 * reader is the host's (tools/); this is just enough to check the runner.
 */
struct ktap_result {
	bool ok;
	unsigned int number;
	char name[128];
	char directive[256];	/* after " # ", or "" */
};

struct ktap {
	bool version;
	int plan;		/* -1: no plan line */
	unsigned int nr_results;
	struct ktap_result results[64];
	unsigned int nr_diagnostics;
	char errors[512];	/* what is wrong with the output, or "" */
};

/* Read @out (changed in place) into @k. */
void ktap_parse(struct ktap *k, char *out);

#ifdef __KSELFTEST_HARNESS_H
/* The output is KTAP with one result per expected case, numbered in order. */
static inline void ktap_check(struct __test_metadata *_metadata,
			      struct ktap *k, const char * const names[],
			      unsigned int nr)
{
	unsigned int i;

	EXPECT_STREQ("", k->errors);
	EXPECT_TRUE(k->version);
	EXPECT_EQ((int)nr, k->plan);
	ASSERT_EQ(nr, k->nr_results);
	for (i = 0; i < nr; i++) {
		EXPECT_EQ(i + 1, k->results[i].number);
		EXPECT_STREQ(names[i], k->results[i].name);
	}
}
#endif /* __KSELFTEST_HARNESS_H */

#endif /* MA_TEST_UTIL_H */
