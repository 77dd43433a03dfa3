/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lpm's parameters: `lookup`, `learnt`, and the configured routes (next
 * hops, inline routes, the route file), which stages/lib/routes_conf.c
 * parses and changes live for lpm and lpm6 alike. No DPDK here: this runs
 * for --check, at start and on reload.
 */
#include <errno.h>
#include <stdlib.h>

#include "lpm.h"

static const char *const lpm_modes[] = { "x4", "bulk", "scalar", NULL };

void
lpm_cfg_free(void *p)
{
	struct lpm_cfg *cfg = p;

	if (cfg == NULL)
		return;
	pf_rconf_free(&cfg->rt);
	free(cfg);
}

int
lpm_parse(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_errs *errs)
{
	const struct pf_node *v;
	struct lpm_cfg *cfg;
	int mode = 0, rc = 0;

	cfg = calloc(1, sizeof(*cfg));
	if (cfg == NULL)
		return -ENOMEM;
	sc->cfg = cfg;
	if ((v = pf_map_get(sc->node, "lookup")) != NULL) {
		if (pf_node_enum(v, "lookup", lpm_modes, &mode, errs) < 0)
			rc = -EINVAL;
		cfg->mode = (enum lpm_lookup_mode)mode;
	}
	if (pf_rconf_parse(&cfg->rt, 4, sc, env, errs) < 0)
		rc = -EINVAL;
	/* No routes at all is fine: the connected subnets (neigh edge) may be all. */
	else if (rc == 0)
		rc = pf_rconf_check_dups(&cfg->rt, env->file, errs);
	if (pf_lrn_parse(sc, 4, &cfg->learnt, errs) < 0)
		rc = -EINVAL;
	if (rc < 0)
		return rc;
	return pf_rconf_check_neigh(&cfg->rt, sc, sc->next[LPM_EDGE_NEIGH] != PF_NONE, errs);
}

int
lpm_cfg_edit(struct pf_stage_conf *sc, const struct pf_stage_env *env, struct pf_change *ch,
	     struct pf_errs *errs)
{
	struct lpm_cfg *cfg = sc->cfg;

	return pf_rconf_edit(&cfg->rt, sc, env, sc->next[LPM_EDGE_NEIGH] != PF_NONE, ch, errs);
}
