// SPDX-License-Identifier: GPL-2.0
/*
 * ma_nested - tests a load from an async job of a module whose init uses async
 *
 * The limit the author of the 3.8 fix named ("hacky and incomplete"): with
 * the PF_USED_ASYNC flag, do_init_module() skips its wait for async work
 * only if the module's init did not use async. This module's init queues a
 * job with async_schedule(), so its load always waits for async work. When
 * ma_request's async job (or ma_init_request's) loads it with
 * request_module(), a load that waits for all async work waits for that
 * job, which waits for the load: a deadlock under the 3.8 flag as under
 * always-sync. A load that waits only for its own work (own-work) returns
 * once this module's job is done, and only then (cases nested_async_load
 * and init_async_job_loads_module).
 *
 * The job marks "started", waits on the gate until the runner writes 1 to
 * "open" (or gate_ms, the default, expires: modprobe passes no options),
 * then marks "done". The job that requested this module reads "done" the
 * moment request_module() returns (ma_request's "target_done"): a kernel
 * that lets the load return while the job is held, older async work (the
 * requesting job) pending, is caught there. It must be installed where
 * modprobe finds it (modules.dep).
 */
#include <linux/module.h>

#include "ma_job.h"

MA_KNOB_GATE_MS();
MA_KNOB_OPEN();
MA_KNOB_STARTED();
MA_KNOB_DONE();
MA_KNOB_TIMED_OUT();

static void ma_job_fn(void *data, async_cookie_t cookie)
{
	ma_job_begin();
	ma_job_hold();
	ma_job_end(0);
}

static int __init ma_nested_init(void)
{
	ma_job_queue();
	return 0;
}
module_init(ma_nested_init);
module_exit(ma_job_exit);

MODULE_DESCRIPTION("module_async: init uses async, loaded from async");
MODULE_LICENSE("GPL");
