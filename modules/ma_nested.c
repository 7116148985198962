// SPDX-License-Identifier: GPL-2.0
/*
 * ma_nested - a module whose init uses async, loaded from an async job
 *
 * The limit the author of the 3.8 fix named ("hacky and incomplete"): with
 * the PF_USED_ASYNC flag, do_init_module() skips its wait for async work
 * only if the module's init did not use async. This module's init queues a
 * trivial job with async_schedule(), so its load always waits for all async
 * work. When ma_request's async job loads it with request_module(), the
 * load waits for that job, which waits for the load: a deadlock under either
 * policy (case nested_async_load, unsafe everywhere: runs only when allowed).
 *
 * It must be installed where modprobe finds it (modules.dep). Its job does
 * not wait for anything; "done" tells that it ran.
 *
 * Knobs (see ma_job.h): started, done.
 */
#include <linux/module.h>

#include "ma_job.h"

module_param_named(started, ma_job.started, int, 0444);
MODULE_PARM_DESC(started, "1 once the init's async job runs");
module_param_named(done, ma_job.done, int, 0444);
MODULE_PARM_DESC(done, "1 once the init's async job has finished");

static void ma_job_fn(void *data, async_cookie_t cookie)
{
	ma_job_begin();
	ma_job_end(0);
}

static int __init ma_nested_init(void)
{
	ma_job_queue();
	return 0;
}
module_init(ma_nested_init);

static void __exit ma_nested_exit(void)
{
	ma_job_exit();
}
module_exit(ma_nested_exit);

MODULE_DESCRIPTION("module_async: init uses async, loaded from async");
MODULE_LICENSE("GPL");
