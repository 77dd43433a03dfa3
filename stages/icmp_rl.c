/* SPDX-License-Identifier: BSD-3-Clause */
/* The ICMP stages' rate limit (stages/icmp_rl.h): parameters and bucket setup. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_mbuf_dyn.h>

#include "icmp_rl.h"

#define ICMP_RL_NS_PER_S 1000000000ull

int
icmp_rl_parse(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_errs *errs)
{
	struct icmp_rl_cfg *cfg = calloc(1, sizeof(*cfg));
	char path[PF_CONF_PATH_MAX];
	const struct pf_node *v;
	int rc = 0;

	RTE_SET_USED(env);
	if (cfg == NULL)
		return -ENOMEM;
	sc->cfg = cfg;
	cfg->rate_pps = 1000;   /* Linux's icmp_msgs_per_sec and icmp_msgs_burst */
	cfg->burst = 50;
	snprintf(path, sizeof(path), "stages.%s.rate_pps", sc->name);
	if ((v = pf_map_get(sc->node, "rate_pps")) != NULL &&
	    pf_node_u32(v, path, 0, 10000000, &cfg->rate_pps, errs) < 0)
		rc = -EINVAL;
	snprintf(path, sizeof(path), "stages.%s.rate_burst", sc->name);
	if ((v = pf_map_get(sc->node, "rate_burst")) != NULL &&
	    pf_node_u32(v, path, 1, 1000000, &cfg->burst, errs) < 0)
		rc = -EINVAL;
	return rc;
}

void
icmp_rl_cfg_free(void *cfg)
{
	free(cfg);
}

void
icmp_rl_init(struct icmp_rl *rl, const struct icmp_rl_cfg *cfg, bool pcap_clock)
{
	if (cfg->rate_pps != 0) {
		rl->cost_ns = ICMP_RL_NS_PER_S / cfg->rate_pps;
		rl->cap_ns = rl->cost_ns * cfg->burst;
		rl->credit_ns = rl->cap_ns;
	}
	rl->pcap_clock = pcap_clock;
	rl->ts_offset = rte_mbuf_dynfield_lookup(RTE_MBUF_DYNFIELD_TIMESTAMP_NAME, NULL);
	if (rl->ts_offset >= 0) {
		int bit = rte_mbuf_dynflag_lookup(RTE_MBUF_DYNFLAG_RX_TIMESTAMP_NAME, NULL);

		rl->ts_flag = bit >= 0 ? 1ull << bit : 0;
	}
	rl->last_ns = pf_now_ns();
}
