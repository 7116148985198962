// SPDX-License-Identifier: GPL-2.0
/*
 * ma_gate - an async job, unrelated to any load, held on a gate
 *
 * Writing 1 to "start" queues one job with async_schedule() from the writing
 * task, after the module has loaded. The job marks "started" and waits on a
 * gate until the runner writes 1 to "open" (or gate_ms expires), then marks
 * "done". While it waits it is outstanding async work like any other: a
 * kernel whose do_init_module() calls async_synchronize_full() for every
 * module makes any load wait for it.
 *
 * The runner holds this job to measure the kernel's policy safely: it loads
 * ma_plain beside it and sees whether that load returns before the gate
 * opens (cases plain_load_skips_unrelated_async and
 * async_probe_skips_unrelated_async, and the policy probe). Note that
 * delete_module() also waits for all async work: unload other modules only
 * after opening the gate.
 *
 * Knobs (see ma_job.h): gate_ms, start, open, started, done, timed_out.
 */
#include <linux/module.h>

#include "ma_job.h"

module_param_named(gate_ms, ma_job.gate_ms, uint, 0444);
MODULE_PARM_DESC(gate_ms, "safety timeout of the gate in ms (default 30000)");
module_param_cb(start, &ma_start_ops, NULL, 0644);
MODULE_PARM_DESC(start, "write 1 to queue the held async job");
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

static int __init ma_gate_init(void)
{
	return 0;
}
module_init(ma_gate_init);

static void __exit ma_gate_exit(void)
{
	ma_job_exit();
}
module_exit(ma_gate_exit);

MODULE_DESCRIPTION("module_async: an unrelated async job held on a gate");
MODULE_LICENSE("GPL");
