/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Link state: one log line when a port's link goes down or comes up.
 *
 * The main thread calls pf_linkwatch_poll() about every 100 ms (with the
 * drop watch, under the console's lock): it reads each port's link
 * (rte_eth_link_get_nowait), keeps what it saw for the stats socket
 * (rt->port_link: state, speed, changes, since when) and publishes "down" to
 * the stages (pf_port_run.link_down), so tx drops what cannot leave such a
 * port as link_down at once instead of retrying a queue that is not full.
 * A vhost-user port whose guest is away, or a tap set down, is then one
 * WARNING when it goes and one line when it comes back with what it cost,
 * not a tx_full line every second: the tx_full drops of the moments before
 * the watch saw it go are folded into the link's lines (the drop watch
 * skips sinks' *_full counters for a short while after a link fell).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "pf_log.h"
#include "pf_runtime.h"
#include "pf_stages.h"

/* How long after a link fell the sinks' *_full drops are the link's (a few polls). */
#define LINK_FOLD_MS 300

void
pf_link_text(char *buf, size_t len, const struct rte_eth_link *l)
{
	if (l->link_status == RTE_ETH_LINK_DOWN) {
		snprintf(buf, len, "down");
		return;
	}
	if (l->link_speed == RTE_ETH_SPEED_NUM_NONE || l->link_speed == RTE_ETH_SPEED_NUM_UNKNOWN)
		snprintf(buf, len, "up, speed unknown, %s", l->link_duplex ? "full-duplex" :
			 "half-duplex");
	else if (l->link_speed >= 1000 && l->link_speed % 1000 == 0)
		snprintf(buf, len, "up, %u Gbps %s", l->link_speed / 1000,
			 l->link_duplex ? "full-duplex" : "half-duplex");
	else
		snprintf(buf, len, "up, %u Mbps %s", l->link_speed,
			 l->link_duplex ? "full-duplex" : "half-duplex");
}

/* The tx_full and link_down drops of port @p p, summed over the sinks that serve it. */
static void
port_tx_drops(const struct pf_runtime *rt, uint16_t p, uint64_t *full, uint64_t *down)
{
	char name[PF_NAME_MAX + 16];
	uint16_t i;

	*full = *down = 0;
	for (i = 0; i < rt->n_stages; i++) {
		const struct pf_stage *st = rt->stages[i];

		if (!(rt->rts[i].kind & PF_RT_KIND_TX))
			continue;
		snprintf(name, sizeof(name), "tx_full.%s", rt->topo->ports[p].name);
		*full += pf_stage_gauge(st, name);
		snprintf(name, sizeof(name), "link_down.%s", rt->topo->ports[p].name);
		*down += pf_stage_gauge(st, name);
	}
}

static void
link_went(struct pf_runtime *rt, uint16_t p, const struct rte_eth_link *now, uint64_t tsc)
{
	struct pf_rt_link *l = &rt->port_link[p];
	const char *name = rt->topo->ports[p].name;
	char text[64];
	uint64_t full, down;
	double secs = (double)(tsc - l->since_tsc) / (double)rte_get_tsc_hz();

	port_tx_drops(rt, p, &full, &down);
	if (now->link_status == RTE_ETH_LINK_DOWN) {
		rt->link_fold_until = tsc + rte_get_tsc_hz() / 1000 * LINK_FOLD_MS;
		PF_LOG(WARNING, "port %s: link down after %.1f s up; frames for it are dropped "
		       "as link_down until it comes back", name, secs);
		/* From the last look while up: the tx_full drops since are the outage's. */
		l->full_at_down = l->full_up;
		l->down_at_down = l->down_up;
		return;
	}
	pf_link_text(text, sizeof(text), now);
	PF_LOG(WARNING, "port %s: link %s after %.1f s down; %" PRIu64 " frames for it "
	       "dropped meanwhile (link_down %" PRIu64 ", tx_full %" PRIu64 ")", name, text, secs,
	       (down - l->down_at_down) + (full - l->full_at_down), down - l->down_at_down,
	       full - l->full_at_down);
}

void
pf_linkwatch_poll(struct pf_runtime *rt)
{
	char text[64];
	struct rte_eth_link link;
	uint64_t tsc = rte_rdtsc();
	uint16_t p;

	if (rt->ports_closed)
		return;
	for (p = 0; p < rt->topo->n_ports; p++) {
		struct pf_rt_link *l = &rt->port_link[p];

		if (!pf_port_present(&rt->topo->ports[p]))
			continue;
		memset(&link, 0, sizeof(link));
		if (rte_eth_link_get_nowait(rt->port_run[p].port_id, &link) != 0)
			continue;
		if (!l->known) {
			/* The first look: say how each port starts (a guest not there yet). */
			pf_link_text(text, sizeof(text), &link);
			if (link.link_status == RTE_ETH_LINK_DOWN)
				PF_LOG(WARNING, "port %s: link down at start; frames for it are "
				       "dropped as link_down until it comes up",
				       rt->topo->ports[p].name);
			else
				PF_LOG(INFO, "port %s: link %s", rt->topo->ports[p].name, text);
			l->since_tsc = tsc;
		} else if (link.link_status != l->link.link_status) {
			link_went(rt, p, &link, tsc);
			l->changes++;
			l->since_tsc = tsc;
		}
		if (link.link_status != RTE_ETH_LINK_DOWN)
			port_tx_drops(rt, p, &l->full_up, &l->down_up);
		l->link = link;
		l->known = true;
		__atomic_store_n(&rt->port_run[p].link_down, link.link_status == RTE_ETH_LINK_DOWN,
				 __ATOMIC_RELAXED);
	}
}
