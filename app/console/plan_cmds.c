/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * /pipefwd/plan[,cores=N][,handoff=C][,recycle=C][,fan=C][,rss=0|1][,window=S][,all=1]: Mpps of
 * candidate layouts of the running pipeline (app/console/pf_plan.h), from what
 * it measured over the window: each stage's cycles per packet (the hand-off
 * of every edge that crosses lcores now taken out), the packets each stage
 * and edge sees per packet the sources read, the sources' port rx (their
 * io_cycles, timed apart from the stages), and the hand-off cost per
 * cross-lcore edge (C, default PF_HANDOFF_CYCLES_DEFAULT: measured on this
 * machine, docs/scaling.md), and the recycling a source's lcore pays for
 * packets that leave it (PF_HANDOFF_RECYCLE_DEFAULT), and the flow-hash fan-out's cost
 * per packet it sends (PF_FAN_CYCLES_DEFAULT). Instances of a stage count as one stage. all=1
 * lists every split, not only the best of each size (the bench looks up its own).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_telemetry.h>

#include "pf_console.h"
#include "pf_plan.h"
#include "pf_portplan.h"
#include "pf_rebalance.h"

struct plan_ctx {
	struct pf_plan_input in;
	struct pf_load_window w;
	uint16_t n;                           /* logical stages */
	uint16_t order[PF_PLAN_MAX_STAGES];   /* logical stage -> its instance 0 (rt index) */
	int logical[PF_MAX_STAGES];           /* rt stage -> logical index */
	double rx_pps;                        /* packets the sources read per second */
	double overflow;                      /* packets full rings dropped per second */
	int current[PF_PLAN_MAX_STAGES];      /* lcore index of each logical stage now */
	bool instances;                       /* some stage runs as instances now */
};

static int
num(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end != '\0' || !(v >= lo && v <= hi))
		return -EINVAL;
	*out = v;
	return 0;
}

/* Sources first, then each stage after every stage that feeds it (Kahn). */
static int
logical_order(const struct pf_runtime *rt, struct plan_ctx *c)
{
	uint16_t indeg[PF_MAX_STAGES] = { 0 }, group[PF_MAX_STAGES], ng = 0, i, r, done = 0;
	bool placed[PF_MAX_STAGES] = { false };

	for (i = 0; i < rt->n_stages; i++) {
		const struct pf_stage_conf *sc = rt->stages[i]->conf;

		if (sc->first == i) {
			if (ng >= PF_PLAN_MAX_STAGES)
				return -EINVAL;
			group[ng++] = i;
		}
	}
	for (r = 0; r < rt->n_rings; r++) {
		uint16_t f = rt->stages[rt->rings[r].conf->from]->conf->first;
		uint16_t t = rt->stages[rt->rings[r].conf->to]->conf->first;

		if (f != t && rt->rings[r].conf->from == f &&
		    rt->stages[rt->rings[r].conf->to]->conf->instance == 0)
			indeg[t]++;          /* one count per group edge */
	}
	/* The first sweep takes the sources only: "sources | the rest" is then a split. */
	for (bool first = true; done < ng; first = false) {
		bool progress = first;

		for (i = 0; i < ng; i++) {
			uint16_t s = group[i];

			if (placed[s] || indeg[s] != 0 ||
			    (first && !(rt->rts[s].kind & PF_RT_KIND_SOURCE)))
				continue;
			placed[s] = true;
			c->logical[s] = c->n;
			c->order[c->n++] = s;
			done++;
			progress = true;
			for (r = 0; r < rt->n_rings; r++)
				if (rt->rings[r].conf->from == s &&
				    rt->stages[rt->rings[r].conf->to]->conf->instance == 0 &&
				    rt->stages[rt->rings[r].conf->to]->conf->first != s)
					indeg[rt->stages[rt->rings[r].conf->to]->conf->first]--;
		}
		if (!progress)
			return -EINVAL;      /* a cycle: --check refuses those */
	}
	for (i = 0; i < rt->n_stages; i++)
		c->logical[i] = c->logical[rt->stages[i]->conf->first];
	return 0;
}

static int
lcore_index(const struct pf_runtime *rt, int owner)
{
	uint16_t k;

	for (k = 0; k < rt->n_lcores; k++)
		if ((int)rt->lcores[k].id == owner)
			return k;
	return 0;
}

/*
 * Whether every port a source reads can spread flows over rx queues: RSS
 * (not `rss: off`), or `rss: external` (the device fills them itself).
 */
static bool
sources_rss(const struct pf_runtime *rt)
{
	struct rte_eth_dev_info info;
	uint16_t i, p;
	bool any = false;

	for (i = 0; i < rt->n_stages; i++) {
		const struct pf_stage_conf *sc = rt->stages[i]->conf;

		if (!(rt->rts[i].kind & PF_RT_KIND_SOURCE))
			continue;
		for (p = 0; p < sc->n_rx_ports; p++) {
			uint8_t mode = rt->topo->ports[sc->rx_ports[p]].rss;

			if (mode == PF_RSS_OFF)
				return false;
			if (mode == PF_RSS_EXTERNAL) {   /* the device fills the queues itself */
				any = true;
				continue;
			}
			if (rte_eth_dev_info_get(rt->port_run[sc->rx_ports[p]].port_id, &info) != 0 ||
			    info.max_rx_queues < 2 || info.flow_type_rss_offloads == 0)
				return false;
			any = true;
		}
	}
	return any;
}

/*
 * Packets a full ring dropped count as carried (the model is of capacity):
 * a stage's drops go back on its out edges in their proportions, and a
 * stage downstream sees its packets times what its inputs would have
 * carried over what they did (@p scale, by logical stage, in order).
 */
static void
overflow_back(struct plan_ctx *c, const double *drops, double *scale)
{
	struct pf_plan_input *in = &c->in;
	double act[PF_PLAN_MAX_EDGES], would, got, out;
	uint16_t i, k, s;

	for (k = 0; k < in->n_edges; k++)
		act[k] = in->e[k].frac;
	for (i = 0; i < c->n; i++) {
		s = i;                  /* c->order is logical order: index i is stage i */
		would = got = out = 0;
		for (k = 0; k < in->n_edges; k++) {
			if (in->e[k].to == s) {
				would += in->e[k].frac;
				got += act[k];
			}
			if (in->e[k].from == s)
				out += act[k];
		}
		scale[s] = in->st[s].source || got <= 0 ? 1 : would / got;
		for (k = 0; k < in->n_edges; k++)
			if (in->e[k].from == s)
				in->e[k].frac = (act[k] + (out > 0 ? drops[s] * act[k] / out : 0)) *
						scale[s];
	}
}

static int
build(const struct pf_runtime *rt, struct plan_ctx *c, double handoff, double recycle,
      double fan, double window)
{
	double cyc[PF_MAX_STAGES], drops[PF_PLAN_MAX_STAGES] = { 0 };
	double scale[PF_PLAN_MAX_STAGES];
	struct pf_plan_input *in = &c->in;
	uint16_t i, r, k;
	int rc;

	rc = pf_rebalance_window(rt, window, &c->w);
	if (rc < 0)
		return rc;
	rc = logical_order(rt, c);
	if (rc < 0)
		return rc;
	in->n_stages = c->n;
	in->hz = (double)rte_get_tsc_hz();
	in->handoff_prod = handoff * PF_HANDOFF_PROD_SHARE;
	in->handoff_cons = handoff - in->handoff_prod;
	in->recycle = recycle;
	in->fan = fan;
	for (i = 0; i < rt->n_stages; i++) {
		cyc[i] = c->w.cycles[i];
		if (rt->rts[i].kind & PF_RT_KIND_SOURCE)
			c->rx_pps += c->w.packets[i];
		if (rt->stages[i]->conf->n_instances > 1)
			c->instances = true;
	}
	if (c->rx_pps <= 0)
		return -EAGAIN;       /* nothing forwarded in the window: no costs to go by */
	/* The sources' port rx (timed apart from the stages: io_cycles). */
	for (i = 0; i < rt->n_stages; i++)
		in->io_cycles += c->w.io[i];
	/*
	 * The hand-off each crossing edge added now is not the stages': out of
	 * their cycles, and the recycling out of the port rx of a source's lcore.
	 */
	for (r = 0; r < rt->n_rings; r++) {
		const struct pf_ring_conf *rc_ = rt->rings[r].conf;

		/* A fan-out edge (hashed per packet): its hash and lists are not the stage's. */
		if (rt->topo->stages[rc_->to].n_instances > 1 &&
		    !pf_topo_same_instance_edge(rt->topo, rc_->from, rc_->to))
			cyc[rc_->from] -= fan * c->w.ring_pkts[r];
		if (rt->rts[rc_->from].owner == rt->rts[rc_->to].owner)
			continue;
		cyc[rc_->from] -= in->handoff_prod * c->w.ring_pkts[r];
		cyc[rc_->to] -= in->handoff_cons * c->w.ring_pkts[r];
		for (i = 0; i < rt->n_stages; i++)
			if ((rt->rts[i].kind & PF_RT_KIND_SOURCE) &&
			    rt->rts[i].owner == rt->rts[rc_->from].owner)
				break;
		if (i < rt->n_stages)
			in->io_cycles -= recycle * c->w.ring_pkts[r];
	}
	if (in->io_cycles < 0)
		in->io_cycles = 0;
	in->io_cycles /= c->rx_pps;
	for (i = 0; i < rt->n_stages; i++) {
		struct pf_plan_stage *s = &in->st[c->logical[i]];

		if (cyc[i] < 0)
			cyc[i] = 0;
		s->cpp += cyc[i];            /* sums for now: per packet below */
		s->frac += c->w.packets[i];
		drops[c->logical[i]] += c->w.ring_full[i];
		c->overflow += c->w.ring_full[i];
		s->source = (rt->rts[i].kind & PF_RT_KIND_SOURCE) != 0;
		c->current[c->logical[i]] = lcore_index(rt, rt->rts[i].owner);
	}
	for (r = 0; r < rt->n_rings; r++) {
		uint16_t f = (uint16_t)c->logical[rt->rings[r].conf->from];
		uint16_t t = (uint16_t)c->logical[rt->rings[r].conf->to];

		for (k = 0; k < in->n_edges; k++)
			if (in->e[k].from == f && in->e[k].to == t)
				break;
		if (k == in->n_edges) {
			if (k >= PF_PLAN_MAX_EDGES)
				return -EINVAL;
			in->e[in->n_edges++] = (struct pf_plan_edge){ .from = f, .to = t };
		}
		in->e[k].frac += c->w.ring_pkts[r];
	}
	overflow_back(c, drops, scale);
	for (i = 0; i < c->n; i++) {
		struct pf_plan_stage *s = &in->st[i];

		s->cpp = s->frac > 0 ? s->cpp / s->frac : 0;
		s->frac = s->frac * scale[i] / c->rx_pps;
	}
	for (k = 0; k < in->n_edges; k++)
		in->e[k].frac /= c->rx_pps;
	in->rss = sources_rss(rt);
	return 0;
}

static void
add_x(struct rte_tel_data *d, const char *name, double v, double scale)
{
	rte_tel_data_add_dict_u64(d, name, v > 0 ? (uint64_t)(v * scale + 0.5) : 0);
}

/*
 * One layout as a dict: kind, lcores, copies, predicted kpps, busiest cycles,
 * and "groups": the YAML stages of each lcore, "|" between lcores (telemetry
 * holds no array of arrays).
 */
static struct rte_tel_data *
layout_dict(const struct pf_runtime *rt, const struct plan_ctx *c, const struct pf_plan_layout *l)
{
	struct rte_tel_data *d = rte_tel_data_alloc();
	uint16_t i, j, n_groups;
	char buf[RTE_TEL_MAX_STRING_LEN];
	size_t len = 0;

	if (d == NULL)
		return NULL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "kind", pf_plan_kind_name(l->kind));
	rte_tel_data_add_dict_u64(d, "lcores", l->lcores);
	rte_tel_data_add_dict_u64(d, "copies", l->copies);
	add_x(d, "kpps", l->mpps, 1000);
	add_x(d, "busiest_cycles_x10", l->busiest, 10);
	n_groups = l->kind == PF_PLAN_SPLIT ? l->lcores : l->kind == PF_PLAN_FANOUT ? 2 : 1;
	buf[0] = '\0';
	for (j = 0; j < n_groups; j++) {
		bool first = true;

		for (i = 0; i < c->n && len < sizeof(buf); i++) {
			if (n_groups > 1 && l->group[i] != j)
				continue;
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s",
						first ? (j == 0 ? "" : " | ") : " ",
						rt->stages[c->order[i]]->conf->group);
			first = false;
		}
	}
	rte_tel_data_add_dict_string(d, "groups", buf);
	return d;
}

static int
cmd_plan(struct pf_console *con, const char *params, struct rte_tel_data *d)
{
	static struct plan_ctx c;          /* under the console lock; big for the stack */
	static struct pf_plan_layout out[PF_PLAN_MAX_LAYOUTS];
	const struct pf_runtime *rt = con->rt;
	double handoff = PF_HANDOFF_CYCLES_DEFAULT, window = PF_REBALANCE_WINDOW_DEFAULT, v;
	double recycle = PF_HANDOFF_RECYCLE_DEFAULT, fan = PF_FAN_CYCLES_DEFAULT;
	double cores = rt->n_lcores, load[PF_PLAN_MAX_STAGES];
	char buf[128], *save = NULL, *tok;
	int rss = -1, n, i, rc;
	bool all = false;
	struct rte_tel_data *arr, *st, *one;

	if (params != NULL && snprintf(buf, sizeof(buf), "%s", params) >= (int)sizeof(buf))
		return -EINVAL;
	for (tok = params != NULL ? strtok_r(buf, ",", &save) : NULL; tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		if (strncmp(tok, "cores=", 6) == 0)
			rc = num(tok + 6, 1, PF_PLAN_MAX_LAYOUTS / 4, &cores);
		else if (strncmp(tok, "handoff=", 8) == 0)
			rc = num(tok + 8, 0, 100000, &handoff);
		else if (strncmp(tok, "recycle=", 8) == 0)
			rc = num(tok + 8, 0, 100000, &recycle);
		else if (strncmp(tok, "fan=", 4) == 0)
			rc = num(tok + 4, 0, 100000, &fan);
		else if (strncmp(tok, "window=", 7) == 0)
			rc = num(tok + 7, 0.5, PF_REBALANCE_WINDOW_MAX, &window);
		else if (strncmp(tok, "rss=", 4) == 0 && num(tok + 4, 0, 1, &v) == 0)
			rc = 0, rss = v != 0;
		else if (strncmp(tok, "all=", 4) == 0 && num(tok + 4, 0, 1, &v) == 0)
			rc = 0, all = v != 0;
		else
			rc = -EINVAL;
		if (rc < 0)
			return rc;
	}
	memset(&c, 0, sizeof(c));
	rc = build(rt, &c, handoff, recycle, fan, window);
	if (rc == -EAGAIN) {
		pf_console_error(d, "no packet read in the window: nothing to measure costs by");
		return 0;
	}
	if (rc < 0)
		return rc;
	c.in.cores = (uint16_t)cores;
	c.in.all_splits = all;
	if (rss >= 0)
		c.in.rss = rss != 0;
	n = pf_plan(&c.in, out, PF_PLAN_MAX_LAYOUTS);
	if (n < 0)
		return n;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "cores", c.in.cores);
	rte_tel_data_add_dict_int(d, "rss", c.in.rss);
	add_x(d, "handoff_cycles_x10", handoff, 10);
	add_x(d, "handoff_prod_cycles_x10", c.in.handoff_prod, 10);
	add_x(d, "recycle_cycles_x10", recycle, 10);
	add_x(d, "fan_cycles_x10", fan, 10);
	add_x(d, "io_cycles_x10", c.in.io_cycles, 10);
	/* A layout is worth a move only past the advisor's margin (the model's error). */
	add_x(d, "min_gain_x1000", PF_REBALANCE_MIN_GAIN, 1000);
	rte_tel_data_add_dict_u64(d, "tsc_hz", (uint64_t)c.in.hz);
	rte_tel_data_add_dict_u64(d, "window_ms", (uint64_t)(c.w.secs * 1000));
	add_x(d, "measured_kpps", c.rx_pps / 1e6, 1000);
	/* Full rings: the producers' cycles include freeing what they refused. */
	add_x(d, "overflow_x1000", c.overflow / c.rx_pps, 1000);
	/* The worker lcores now, for a client that writes a layout as an lcores: map. */
	buf[0] = '\0';
	for (i = 0, rc = 0; i < rt->n_lcores && rc < (int)sizeof(buf); i++)
		rc += snprintf(buf + rc, sizeof(buf) - (size_t)rc, "%s%u", i ? " " : "",
			       rt->lcores[i].id);
	rte_tel_data_add_dict_string(d, "lcores_now", buf);
	/* The layout running now, through the same model (not with instances). */
	if (!c.instances && rt->n_lcores <= PF_PLAN_MAX_STAGES)
		add_x(d, "current_kpps", c.in.hz /
		      pf_plan_map_cost(&c.in, c.current, rt->n_lcores, load) / 1e6, 1000);
	st = rte_tel_data_alloc();
	if (st != NULL) {
		rte_tel_data_start_dict(st);
		for (i = 0; i < c.n; i++) {
			one = rte_tel_data_alloc();
			if (one == NULL)
				break;
			rte_tel_data_start_dict(one);
			add_x(one, "cycles_x10", c.in.st[i].cpp, 10);
			add_x(one, "frac_x1000", c.in.st[i].frac, 1000);
			rte_tel_data_add_dict_int(one, "source", c.in.st[i].source);
			rte_tel_data_add_dict_int(one, "lcore_now",
						  (int)rt->lcores[c.current[i]].id);
			if (rte_tel_data_add_dict_container(st, rt->stages[c.order[i]]->conf->group,
							    one, 0) != 0)
				rte_tel_data_free(one);
		}
		if (rte_tel_data_add_dict_container(d, "stages", st, 0) != 0)
			rte_tel_data_free(st);
	}
	/* Best first, keyed by rank ("1" the best): telemetry holds no array of dicts. */
	arr = rte_tel_data_alloc();
	if (arr == NULL)
		return 0;
	rte_tel_data_start_dict(arr);
	for (i = 0; i < n; i++) {
		char key[16];

		one = layout_dict(rt, &c, &out[i]);
		snprintf(key, sizeof(key), "%d", i + 1);
		if (one != NULL && rte_tel_data_add_dict_container(arr, key, one, 0) != 0)
			rte_tel_data_free(one);
	}
	if (rte_tel_data_add_dict_container(d, "layouts", arr, 0) != 0)
		rte_tel_data_free(arr);
	return 0;
}

const struct pf_cmd pf_plan_cmds[] = {
	{ "/pipefwd/plan", "pipefwd layout plan. Params: [cores=N][,handoff=C][,recycle=C][,fan=C][,rss=0|1][,window=S][,all=1]",
	  cmd_plan, false },
	{ NULL, NULL, NULL, false },
};
