/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ports as an operator sees them (registered by app/console/commands.c):
 *
 *   /pipefwd/ports fields beyond the counters (stats.c lists the ports and
 *                  calls pf_port_fill_more): link state, speed, duplex,
 *                  changes, MTU, driver, MAC, queues, per-port tx drops
 *   /pipefwd/port_xstats,PORT[,OFFSET]  the driver's extended stats, a page
 *   /pipefwd/port_link,PORT,up|down     set a port's link (a cable pull)
 *
 * The link is what the link watch saw last (app/runtime/linkwatch.c, about
 * every 100 ms): a reply never calls into a driver's link update.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_telemetry.h>

#include "pf_console.h"
#include "pf_log.h"
#include "pf_runtime.h"
#include "pf_stages.h"

#define XSTATS_PAGE 100        /* names of up to 64 bytes: a page fits 16 KiB */

/* Port @p name's index, or -1. */
static int
port_find(const struct pf_runtime *rt, const char *name)
{
	uint16_t p;

	for (p = 0; p < rt->topo->n_ports; p++)
		if (strcmp(rt->topo->ports[p].name, name) == 0)
			return p;
	return -1;
}

/* What the sinks serving port @p p dropped for it, by reason (their per-port gauges). */
static void
port_tx_drops(const struct pf_runtime *rt, uint16_t p, struct rte_tel_data *d)
{
	char name[PF_NAME_MAX + 16];
	uint64_t full = 0, down = 0;
	uint16_t i;

	for (i = 0; i < rt->n_stages; i++) {
		if (!(rt->rts[i].kind & PF_RT_KIND_TX))
			continue;
		snprintf(name, sizeof(name), "tx_full.%s", rt->topo->ports[p].name);
		full += pf_stage_gauge(rt->stages[i], name);
		snprintf(name, sizeof(name), "link_down.%s", rt->topo->ports[p].name);
		down += pf_stage_gauge(rt->stages[i], name);
	}
	rte_tel_data_add_dict_u64(d, "tx_full", full);
	rte_tel_data_add_dict_u64(d, "link_down_drops", down);
}

static void
port_link(const struct pf_runtime *rt, uint16_t p, struct rte_tel_data *d)
{
	const struct pf_rt_link *l = &rt->port_link[p];
	uint32_t speed = l->link.link_speed;

	rte_tel_data_add_dict_string(d, "link", !l->known ? "unknown" :
				     l->link.link_status ? "up" : "down");
	/* Mbit/s; 0 when down or unknown (RTE_ETH_SPEED_NUM_UNKNOWN) */
	rte_tel_data_add_dict_u64(d, "speed_mbps", l->link.link_status &&
				  speed != RTE_ETH_SPEED_NUM_UNKNOWN ? speed : 0);
	rte_tel_data_add_dict_string(d, "duplex", !l->link.link_status ? "-" :
				     l->link.link_duplex ? "full" : "half");
	rte_tel_data_add_dict_int(d, "autoneg", l->link.link_autoneg);
	rte_tel_data_add_dict_u64(d, "link_changes", l->changes);
	rte_tel_data_add_dict_u64(d, "link_for_ms", l->known ?
				  (rte_rdtsc() - l->since_tsc) * 1000 / rte_get_tsc_hz() : 0);
}

void
pf_port_fill_more(struct rte_tel_data *d, const struct pf_runtime *rt, uint16_t p)
{
	const struct pf_port_conf *pc = &rt->topo->ports[p];
	uint16_t pid = rt->port_run[p].port_id, mtu = 0;
	struct rte_eth_dev_info info;
	struct rte_eth_stats es;
	struct rte_tel_data *oq;
	char buf[32];
	uint16_t q;

	port_link(rt, p, d);
	rte_tel_data_add_dict_u64(d, "mtu", pc->mtu);
	rte_tel_data_add_dict_u64(d, "max_frame", pc->max_frame);
	snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", pc->mac[0], pc->mac[1],
		 pc->mac[2], pc->mac[3], pc->mac[4], pc->mac[5]);
	rte_tel_data_add_dict_string(d, "mac", buf);
	if (rt->ports_closed || rte_eth_dev_info_get(pid, &info) != 0)
		return;
	rte_tel_data_add_dict_string(d, "driver", info.driver_name);
	if (rte_eth_dev_get_mtu(pid, &mtu) == 0)
		rte_tel_data_add_dict_u64(d, "dev_mtu", mtu);
	rte_tel_data_add_dict_u64(d, "rxq", info.nb_rx_queues);
	rte_tel_data_add_dict_u64(d, "txq", info.nb_tx_queues);
	rte_tel_data_add_dict_u64(d, "rxd", pc->rxd);
	rte_tel_data_add_dict_u64(d, "txd", pc->txd);
	port_tx_drops(rt, p, d);
	/* What the PMD counted per tx queue (when it keeps per-queue counters). */
	oq = rte_tel_data_alloc();
	if (oq == NULL)
		return;
	pf_runtime_port_stats(rt, p, &es);
	rte_tel_data_start_array(oq, RTE_TEL_U64_VAL);
	for (q = 0; q < info.nb_tx_queues && q < RTE_ETHDEV_QUEUE_STAT_CNTRS; q++)
		rte_tel_data_add_array_u64(oq, es.q_opackets[q]);
	if (rte_tel_data_add_dict_container(d, "q_opackets", oq, 0) != 0)
		rte_tel_data_free(oq);
}

/* A telemetry key from an xstat name (DPDK 22.11 keys: [A-Za-z0-9_/] only). */
static void
xstat_key(char *out, size_t len, const char *name)
{
	size_t i;

	for (i = 0; name[i] != '\0' && i + 1 < len; i++)
		out[i] = (name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
			 (name[i] >= '0' && name[i] <= '9') || name[i] == '_' ? name[i] : '_';
	out[i] = '\0';
}

/*
 * "PORT[,OFFSET]": the driver's extended stats (rte_eth_xstats_get), since
 * start, at most XSTATS_PAGE from OFFSET; "next" is where the next page
 * starts, -1 after the last.
 */
static int
cmd_port_xstats(struct pf_console *con, const char *params, struct rte_tel_data *d)
{
	const struct pf_runtime *rt = con->rt;
	struct rte_eth_xstat_name *names = NULL;
	struct rte_eth_xstat *vals = NULL;
	struct rte_tel_data *x;
	char buf[64], key[RTE_ETH_XSTATS_NAME_SIZE], *off, *e;
	unsigned long from = 0;
	int p, n, k, end, rc = 0;
	uint16_t pid;

	if (params == NULL || snprintf(buf, sizeof(buf), "%s", params) >= (int)sizeof(buf))
		return -EINVAL;
	off = strchr(buf, ',');
	if (off != NULL) {
		*off++ = '\0';
		from = strtoul(off, &e, 10);
		if (*off == '\0' || *e != '\0')
			return -EINVAL;
	}
	p = port_find(rt, buf);
	if (p < 0) {
		pf_console_error(d, "unknown port");
		return 0;
	}
	if (rt->ports_closed)
		return -ENODEV;
	pid = rt->port_run[p].port_id;
	n = rte_eth_xstats_get_names(pid, NULL, 0);
	if (n < 0)
		return n;
	names = calloc(RTE_MAX(n, 1), sizeof(*names));
	vals = calloc(RTE_MAX(n, 1), sizeof(*vals));
	x = rte_tel_data_alloc();
	if (names == NULL || vals == NULL || x == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	/* A driver may report fewer values than names: show only what both gave. */
	n = RTE_MIN(rte_eth_xstats_get_names(pid, names, n), rte_eth_xstats_get(pid, vals, n));
	if (n < 0) {
		rc = n;
		goto out;
	}
	end = (int)RTE_MIN((unsigned long)n, from + XSTATS_PAGE);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "port", rt->topo->ports[p].name);
	rte_tel_data_add_dict_u64(d, "count", (uint64_t)n);
	rte_tel_data_add_dict_int(d, "next", end < n ? end : -1);
	rte_tel_data_start_dict(x);
	for (k = (int)RTE_MIN(from, (unsigned long)n); k < end; k++) {
		xstat_key(key, sizeof(key),
			  names[vals[k].id < (uint64_t)n ? vals[k].id : (uint64_t)k].name);
		rte_tel_data_add_dict_u64(x, key, vals[k].value);
	}
	if (rte_tel_data_add_dict_container(d, "xstats", x, 0) == 0)
		x = NULL;
out:
	rte_tel_data_free(x);
	free(names);
	free(vals);
	return rc;
}

/*
 * "PORT,up|down": set a port's link administratively (rte_eth_dev_set_link_*),
 * as a cable pull would: what follows link state (the link watch, host
 * interfaces' carrier, next-hop groups) sees it.
 */
static int
cmd_port_link(struct pf_console *con, const char *params, struct rte_tel_data *d)
{
	const struct pf_runtime *rt = con->rt;
	char buf[64], *state;
	int p, rc;

	if (params == NULL || snprintf(buf, sizeof(buf), "%s", params) >= (int)sizeof(buf))
		return -EINVAL;
	state = strchr(buf, ',');
	if (state == NULL)
		return -EINVAL;
	*state++ = '\0';
	p = port_find(rt, buf);
	if (p < 0 || (strcmp(state, "up") != 0 && strcmp(state, "down") != 0)) {
		pf_console_error(d, p < 0 ? "unknown port" : "expected up or down");
		return 0;
	}
	rc = state[0] == 'u' ? rte_eth_dev_set_link_up(rt->port_run[p].port_id) :
			       rte_eth_dev_set_link_down(rt->port_run[p].port_id);
	if (rc < 0) {
		pf_console_error(d, rc == -ENOTSUP ? "this port's driver cannot set its link" :
				 "the driver refused");
		return 0;
	}
	PF_LOG(INFO, "port %s: link set %s by the stats socket", buf, state);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "port", buf);
	rte_tel_data_add_dict_string(d, "link", state);
	return 0;
}

/* Help strings stay under 64 bytes (the telemetry limit). */
const struct pf_cmd pf_port_cmds[] = {
	{ "/pipefwd/port_xstats", "pipefwd: a port's driver xstats. Params: PORT[,OFFSET]",
	  cmd_port_xstats, false },
	{ "/pipefwd/port_link", "pipefwd: set a port's link. Params: PORT,up|down", cmd_port_link,
	  false },
	{ NULL, NULL, NULL, false },
};
