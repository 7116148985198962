/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tasks as /proc shows them: state and kernel stack, for the evidence of a
 * load or an async job that does not come back.
 */
#ifndef MA_TASKS_H
#define MA_TASKS_H

#include <stdbool.h>
#include <sys/types.h>

/* Set the /proc directory to read (tests); NULL restores "/proc". */
void tasks_set_proc_root(const char *dir);

/* The state letter of @pid ('R', 'S', 'D', 'Z', ...), or 0 if unknown. */
char task_state(pid_t pid);

/* Read the command name of @pid into @buf; returns 0 or -errno. */
int task_comm(pid_t pid, char *buf, size_t len);

/* Log "task <pid> (<comm>) state <S>" and its kernel stack. */
void task_dump(pid_t pid);

/* Log every task in uninterruptible sleep (D); returns how many. */
int tasks_dump_blocked(void);

#endif /* MA_TASKS_H */
