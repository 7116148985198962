/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The wait-for cycle of a module loading deadlock, from observed stacks.
 *
 * The deadlock this suite guards against has two parties, each visible on
 * its kernel stack (tasks.h, sysrq.h):
 *   - an async job (async_run_entry_fn) that called request_module() and
 *     waits for the usermode helper (__request_module,
 *     call_usermodehelper_exec);
 *   - a module loader started by that helper (a modprobe whose parent is a
 *     kernel thread), whose do_init_module() waits for async work
 *     (async_synchronize_*): all of it, the job that waits for it included.
 * When both are seen the cycle is closed and named in one line. So it is
 * too when that modprobe sleeps (S) in its load waiting for the load of
 * the same module under way (tasks.h: task_waits_for_a_load()), and the one
 * task in do_init_module(), that load, waits for async work: the module
 * requested while its init ran. Otherwise the line says what was seen
 * instead. Nothing here is assumed: a party
 * that is not on any stack is not in the line.
 */
#ifndef MA_WAITFOR_H
#define MA_WAITFOR_H

#include <stdbool.h>
#include <stddef.h>

#include "tasks.h"

/* Is @t part of module loading or async work (worth showing)? */
bool waitfor_involved(const struct task_stack *t);

/*
 * Describe the wait-for cycle among @set's tasks in @buf, one line without
 * a newline. Returns true if a cycle was found, false if @buf says what was
 * seen instead.
 */
bool waitfor_cycle(const struct task_set *set, char *buf, size_t len);

/*
 * The evidence of a wedge among @set's tasks: their wait-for cycle (true,
 * described in @buf), else the first task blocked in async_synchronize_*
 * (where a load or unload waits for async work: its pid in *@pid, named
 * in @buf); neither: false, *@pid 0, @buf says what was seen instead. A
 * task seen anywhere else, a slow load's read of its file say, is none.
 */
bool waitfor_wedge(const struct task_set *set, char *buf, size_t len,
		   int *pid);

#endif /* MA_WAITFOR_H */
