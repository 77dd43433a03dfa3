/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The observation sink (app/runtime/pf_sink.h): what stages call, handed to
 * the renderer, and the runtime's own renderer, a collector of gauges.
 */
#include <stdio.h>
#include <string.h>

#include "pf_sink.h"
#include "pf_stages.h"

void
pf_sink_u64(struct pf_sink *s, const char *key, uint64_t v)
{
	s->ops->u64(s->ctx, key, v);
}

void
pf_sink_int(struct pf_sink *s, const char *key, int64_t v)
{
	s->ops->i64(s->ctx, key, v);
}

void
pf_sink_str(struct pf_sink *s, const char *key, const char *v)
{
	s->ops->str(s->ctx, key, v);
}

struct pf_show *
pf_show_start(struct pf_sink *s, const struct pf_show_req *req, const struct pf_show_col *cols,
	      uint16_t n_cols)
{
	return s->ops->show_start != NULL ? s->ops->show_start(s->ctx, req, cols, n_cols) : NULL;
}

void
pf_show_mac(char *buf, const uint8_t *m)
{
	snprintf(buf, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

/* ---- the gauge collector ------------------------------------------------ */

struct collect {
	struct pf_gauge *g;
	uint16_t n, max;
};

static void
collect_u64(void *ctx, const char *key, uint64_t v)
{
	struct collect *c = ctx;

	if (c->n == c->max)
		return;
	snprintf(c->g[c->n].name, sizeof(c->g[c->n].name), "%s", key);
	c->g[c->n++].value = v;
}

static void
collect_i64(void *ctx, const char *key, int64_t v)
{
	collect_u64(ctx, key, (uint64_t)v);
}

static void
collect_str(void *ctx, const char *key, const char *v)
{
	/* Gauges are numbers: a string has no place among them. */
}

static const struct pf_sink_ops collect_ops = {
	.u64 = collect_u64,
	.i64 = collect_i64,
	.str = collect_str,
};

uint16_t
pf_stage_gauges(const struct pf_stage *st, struct pf_gauge *g, uint16_t max)
{
	struct collect c = { g, 0, max };
	struct pf_sink s = { &collect_ops, &c };

	if (st->ops->obs.gauges != NULL)
		st->ops->obs.gauges(st, &s);
	return c.n;
}

uint64_t
pf_stage_gauge(const struct pf_stage *st, const char *name)
{
	struct pf_gauge g[64];
	uint16_t i, n = pf_stage_gauges(st, g, 64);

	for (i = 0; i < n; i++)
		if (strcmp(g[i].name, name) == 0)
			return g[i].value;
	return 0;
}
