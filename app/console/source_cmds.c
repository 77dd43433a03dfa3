/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Route sources on the stats socket (app/control/pf_routing.h does the
 * work): each source's state, its daemon, and what became of its routes.
 *
 *   /pipefwd/sources   per source: type, id, namespace, state (listening, up,
 *                      lost, syncing, down) and for how long, the peer,
 *                      routes held, operations and their outcome, skips by
 *                      reason, resyncs
 */
#include <errno.h>
#include <stdio.h>

#include <rte_telemetry.h>

#include "pf_console.h"
#include "pf_routing.h"

static void
fill_source(struct rte_tel_data *d, const struct pf_source_state *s)
{
	struct rte_tel_data *skip = rte_tel_data_alloc();
	const struct pf_rsrc_stats *rs = &s->rs;
	char where[96];
	unsigned int k;

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "type", s->conf.type == PF_SOURCE_FPM ? "fpm" : "netlink");
	rte_tel_data_add_dict_u64(d, "id", s->conf.id);
	rte_tel_data_add_dict_string(d, "namespace", s->conf.ns);
	if (s->conf.type == PF_SOURCE_FPM)
		snprintf(where, sizeof(where), "%s:%u", s->conf.listen, s->conf.port);
	else
		snprintf(where, sizeof(where), "table %u", s->conf.table);
	rte_tel_data_add_dict_string(d, "where", where);
	rte_tel_data_add_dict_string(d, "state", s->state);
	rte_tel_data_add_dict_u64(d, "state_ms", (uint64_t)(s->state_s * 1000));
	/* -1: nothing heard yet */
	rte_tel_data_add_dict_int(d, "last_update_ms", s->last_update_s < 0 ? -1 :
				  (int)(s->last_update_s < 2e6 ? s->last_update_s * 1000 : 2e9));
	rte_tel_data_add_dict_string(d, "peer", s->peer);
	rte_tel_data_add_dict_string(d, "error", s->error);
	rte_tel_data_add_dict_u64(d, "grace_s", s->conf.grace_ms / 1000);
	rte_tel_data_add_dict_u64(d, "routes_ipv4", rs->routes4);
	rte_tel_data_add_dict_u64(d, "routes_ipv6", rs->routes6);
	rte_tel_data_add_dict_u64(d, "pending", rs->pending);
	rte_tel_data_add_dict_u64(d, "nexthop_objects", rs->nexthops);
	rte_tel_data_add_dict_u64(d, "connects", s->connects);
	rte_tel_data_add_dict_u64(d, "resyncs", s->resyncs);
	rte_tel_data_add_dict_u64(d, "enobufs", s->enobufs);
	rte_tel_data_add_dict_u64(d, "bytes", s->bytes);
	rte_tel_data_add_dict_u64(d, "messages", rs->messages);
	rte_tel_data_add_dict_u64(d, "route_messages", rs->route_msgs);
	rte_tel_data_add_dict_u64(d, "replace_pairs", rs->replace_pairs);
	rte_tel_data_add_dict_u64(d, "nexthop_messages", rs->nexthop_msgs);
	rte_tel_data_add_dict_u64(d, "operations", rs->ops);
	rte_tel_data_add_dict_u64(d, "batches", s->batches);
	rte_tel_data_add_dict_u64(d, "added", s->res.added);
	rte_tel_data_add_dict_u64(d, "replaced", s->res.replaced);
	rte_tel_data_add_dict_u64(d, "deleted", s->res.deleted);
	rte_tel_data_add_dict_u64(d, "unchanged", s->res.unchanged);
	rte_tel_data_add_dict_u64(d, "missing", s->res.missing);
	rte_tel_data_add_dict_u64(d, "refused", s->res.refused);
	rte_tel_data_add_dict_u64(d, "shadowed", s->res.shadowed);
	rte_tel_data_add_dict_u64(d, "swept", rs->swept);
	rte_tel_data_add_dict_u64(d, "withdrawn", rs->withdrawn);
	if (skip == NULL)
		return;
	rte_tel_data_start_dict(skip);
	for (k = 0; k < PF_RSRC_SKIP_MAX; k++)
		rte_tel_data_add_dict_u64(skip, pf_rsrc_skip_names[k], rs->skipped[k]);
	if (rte_tel_data_add_dict_container(d, "skipped", skip, 0) != 0)
		rte_tel_data_free(skip);
}

static int
cmd_sources(struct pf_console *con, const char *params, struct rte_tel_data *d)
{
	struct pf_source_state st[PF_MAX_SOURCES];
	unsigned int n = pf_routing_sources(con->routing, st, PF_MAX_SOURCES), i;

	(void)params;
	rte_tel_data_start_dict(d);
	for (i = 0; i < n; i++) {
		struct rte_tel_data *s = rte_tel_data_alloc();

		if (s == NULL)
			return -ENOMEM;
		fill_source(s, &st[i]);
		if (rte_tel_data_add_dict_container(d, st[i].conf.name, s, 0) != 0)
			rte_tel_data_free(s);
	}
	return 0;
}

const struct pf_cmd pf_source_cmds[] = {
	{ "/pipefwd/sources", "pipefwd: route sources (FPM, netlink): state, routes, outcomes",
	  cmd_sources, true },
	{ NULL, NULL, NULL, false },
};
