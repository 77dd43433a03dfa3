/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The sink behind the observation contract (include/pf_stage_obs.h): a
 * stage writes named values and table pages into a struct pf_sink, which
 * is a renderer the app chose. The runtime's: a collector of gauges
 * (pf_stage_gauges); the console's: telemetry JSON (app/console/show.c),
 * which the -j report and the text summary also read through the collector.
 */
#ifndef PF_SINK_H
#define PF_SINK_H

#include <stdint.h>

#include "pf_stage_obs.h"

struct pf_sink_ops {
	void (*u64)(void *ctx, const char *key, uint64_t v);
	void (*i64)(void *ctx, const char *key, int64_t v);
	void (*str)(void *ctx, const char *key, const char *v);
	/** Tables: NULL when the renderer takes none. */
	struct pf_show *(*show_start)(void *ctx, const struct pf_show_req *req,
				      const struct pf_show_col *cols, uint16_t n_cols);
};

struct pf_sink {
	const struct pf_sink_ops *ops;
	void *ctx;
};

#endif /* PF_SINK_H */
