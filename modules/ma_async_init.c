// SPDX-License-Identifier: GPL-2.0
/*
 * ma_async_init - a module whose init calls async_schedule()
 *
 * do_init_module() calls async_synchronize_full() after a module's init so
 * that all the async work the module started has finished when the load
 * (finit_module(2), modprobe) returns. This module's init queues one job with
 * async_schedule() and returns at once; the job marks "started", waits on a
 * gate that the runner opens by writing 1 to "open" (or gate_ms expires),
 * then marks "done".
 *
 * The runner (case async_init_completes) starts the load, waits until the job
 * is held, checks that the load does not return while the job is held, opens
 * the gate and checks that "done" is 1 the moment the load returns. Every
 * kernel since 3.8 passes; a kernel that returned from the load early would
 * let modprobe's caller use a module that is still initialising.
 *
 * Knobs (see ma_job.h): gate_ms, open, started, done, timed_out.
 */
#include <linux/module.h>

#include "ma_job.h"

module_param_named(gate_ms, ma_job.gate_ms, uint, 0444);
MODULE_PARM_DESC(gate_ms, "safety timeout of the gate in ms (default 30000)");
module_param_cb(open, &ma_open_ops, NULL, 0644);
MODULE_PARM_DESC(open, "write 1 to let the held job finish");
module_param_named(started, ma_job.started, int, 0444);
MODULE_PARM_DESC(started, "1 once the job runs and waits on the gate");
module_param_named(done, ma_job.done, int, 0444);
MODULE_PARM_DESC(done, "1 once the job has finished");
module_param_named(timed_out, ma_job.timed_out, int, 0444);
MODULE_PARM_DESC(timed_out, "1 if gate_ms expired before the gate opened");

static void ma_job_fn(void *data, async_cookie_t cookie)
{
	ma_job_begin();
	ma_job_hold();
	ma_job_end(0);
}

static int __init ma_async_init_init(void)
{
	ma_job_queue();
	return 0;
}
module_init(ma_async_init_init);

static void __exit ma_async_init_exit(void)
{
	ma_job_exit();
}
module_exit(ma_async_init_exit);

MODULE_DESCRIPTION("module_async: init queues an async job held on a gate");
MODULE_LICENSE("GPL");
