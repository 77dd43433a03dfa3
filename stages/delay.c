/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * delay: a test stage that models a slow stage (registered only in pipefwd-test). It busy-waits `us`
 * microseconds per burst and passes every packet on unchanged, so a topology
 * can stall a consumer (ring-full fault tests) or show a bottleneck.
 * Edges: drop (never used), out.
 * Counters: info: delayed_bursts (bursts that waited).
 * Params: us (0..1000000, default 0): busy-wait per burst; changes live on reload.
 * A burst of 100 us or more is not charged to the stage's cycles: the runtime
 * takes so long an interval for preemption (edge.c charge()), so a test that
 * reads stage cost keeps `us` under 100.
 *
 * Not for production pipelines: a busy-wait holds its lcore for the whole delay.
 */
#include <errno.h>
#include <stdlib.h>

#include <rte_cycles.h>

#include "pf_stage.h"

#define foreach_delay_ctr(_) \
	_(DELAY_CTR_BURSTS, delayed_bursts, INFO, "bursts that waited `us` microseconds")

PF_CTR_ENUM(delay, foreach_delay_ctr);
PF_CTR_DESCS(delay, foreach_delay_ctr);

enum { DELAY_EDGE_DROP, DELAY_EDGE_OUT, DELAY_EDGE_MAX };
static const char *const delay_edges[] = { "drop", "out" };
static const char *const delay_keys[] = { "us", NULL };

struct delay_cfg {
	uint32_t us;
};

struct delay_priv {
	uint32_t us;                      /* read every burst; written by update */
};

static int
delay_parse(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_errs *errs)
{
	const struct pf_node *v = pf_map_get(sc->node, "us");
	char path[PF_CONF_PATH_MAX];
	struct delay_cfg *cfg = calloc(1, sizeof(*cfg));

	if (cfg == NULL)
		return -ENOMEM;
	sc->cfg = cfg;
	snprintf(path, sizeof(path), "stages.%s.us", sc->name);
	if (v != NULL && pf_node_u32(v, path, 0, 1000000, &cfg->us, errs) < 0)
		return -EINVAL;
	return 0;
}

static void
delay_cfg_free(void *cfg)
{
	free(cfg);
}

static int
delay_init(struct pf_stage *st, struct pf_errs *errs)
{
	struct delay_priv *d = st->priv;

	d->us = ((const struct delay_cfg *)st->conf->cfg)->us;
	return 0;
}

static uint16_t
delay_process_burst(struct pf_stage *st, struct rte_mbuf **pkts, uint16_t n, uint16_t *edge)
{
	const struct delay_priv *d = st->priv;
	uint32_t us = __atomic_load_n(&d->us, __ATOMIC_RELAXED);
	uint16_t i;

	for (i = 0; i < n; i++)
		edge[i] = DELAY_EDGE_OUT;
	if (us != 0 && n != 0) {
		rte_delay_us_block(us);
		st->ctrs[DELAY_CTR_BURSTS]++;
	}
	return DELAY_EDGE_OUT;
}

/* A plain value: nothing to prepare; the new delay applies from the next burst. */
static int
delay_update_prepare(struct pf_stage *st, struct pf_stage_conf *new_sc, void **prep,
		     struct pf_errs *errs)
{
	*prep = NULL;
	return 0;
}

static void *
delay_update_commit(struct pf_stage *st, const struct pf_stage_conf *new_sc, void *prep)
{
	struct delay_priv *d = st->priv;

	__atomic_store_n(&d->us, ((const struct delay_cfg *)new_sc->cfg)->us, __ATOMIC_RELAXED);
	return NULL;
}

static void
delay_update_abort(struct pf_stage *st, void *prep)
{
}

const struct pf_stage_ops pf_delay_ops = {
	.type = "delay",
	.flags = PF_STAGE_KEEPS_FLOW,
	.summary = "test stage (pipefwd-test only): busy-wait `us` per burst, pass packets on",
	.priv_size = sizeof(struct delay_priv),
	.n_edges = DELAY_EDGE_MAX,
	.edge_names = delay_edges,
	.default_edge = DELAY_EDGE_OUT,
	.n_ctrs = delay_ctr_max,
	.ctrs = delay_ctrs,
	.dp = {
		.process_burst = delay_process_burst,
	},
	.ctl = {
		.param_keys = delay_keys,
		.parse = delay_parse,
		.cfg_free = delay_cfg_free,
		.init = delay_init,
		.prepare = delay_update_prepare,
		.commit = delay_update_commit,
		.release = delay_update_abort,
	},
};
