// SPDX-License-Identifier: GPL-2.0
/*
 * ma_request - an async job that loads a module with request_module()
 *
 * The 2013 deadlock in its smallest form. Writing 1 to "start" queues one
 * job with async_schedule() (from the writing task, after this module has
 * loaded); the job calls request_module("%s", target) synchronously, as
 * device probing did when an async probe needed an I/O scheduler, records
 * what it returned in "result" and marks "done".
 *
 * request_module() runs modprobe and waits for it. If the target's
 * do_init_module() waits for all async work, it waits for this job, which
 * waits for modprobe: neither moves again, and the wait is uninterruptible.
 * It does not happen when the target has async_probe, or where the kernel
 * syncs only after an init that used async itself (the 3.8 flag) - unless
 * the target's init does use async (ma_nested). kernel/kmod.c warns about
 * every such call: WARN_ON_ONCE(wait && current_is_async()).
 *
 * The runner (cases request_module_from_async_*, nested_async_load and
 * warn_on_sync_request_from_async) waits for "done" with a bound, and runs
 * the cases that would deadlock only where its policy probe says they
 * cannot, or when told to. A job that never returns keeps its module
 * reference, so the module then cannot be unloaded (rather than crash).
 *
 * Knobs (see ma_job.h): target, start, started, done, result.
 */
#include <linux/kmod.h>
#include <linux/module.h>

#include "ma_job.h"

static char target[MODULE_NAME_LEN];
module_param_string(target, target, sizeof(target), 0644);
MODULE_PARM_DESC(target, "the module the job requests");
module_param_named(gate_ms, ma_job.gate_ms, uint, 0444);
MODULE_PARM_DESC(gate_ms, "bound of the exit's wait for the job, in ms");
module_param_cb(start, &ma_start_ops, NULL, 0644);
MODULE_PARM_DESC(start, "write 1 to queue the job");
module_param_named(started, ma_job.started, int, 0444);
MODULE_PARM_DESC(started, "1 once the job runs");
module_param_named(done, ma_job.done, int, 0444);
MODULE_PARM_DESC(done, "1 once request_module() has returned");
module_param_named(result, ma_job.result, int, 0444);
MODULE_PARM_DESC(result, "what request_module() returned");

static void ma_job_fn(void *data, async_cookie_t cookie)
{
	char name[MODULE_NAME_LEN];

	/* A write to "target" must not change the name under our feet. */
	kernel_param_lock(THIS_MODULE);
	strscpy(name, target, sizeof(name));
	kernel_param_unlock(THIS_MODULE);

	ma_job_begin();
	pr_info("requesting %s from an async job\n", name);
	ma_job_end(request_module("%s", name));
}

static int __init ma_request_init(void)
{
	return 0;
}
module_init(ma_request_init);

static void __exit ma_request_exit(void)
{
	ma_job_exit();
}
module_exit(ma_request_exit);

MODULE_DESCRIPTION("module_async: an async job calls request_module()");
MODULE_LICENSE("GPL");
