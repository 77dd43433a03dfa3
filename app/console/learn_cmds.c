/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Learnt routes by hand on the stats socket (app/control/pf_learnt.h does the
 * work): what a routing daemon would send, for tests, benchmarks and an
 * operator checking a path before the daemon does.
 *
 *   /pipefwd/learn,add|del,SRC,PREFIX[,TARGET...]   TARGET: GW@PORT[*W], @PORT,
 *                                                  blackhole, unreachable, prohibit
 */
#include <errno.h>
#include <stdio.h>

#include <rte_telemetry.h>

#include "pf_console.h"
#include "pf_learnt.h"

static int
cmd_learn(struct pf_console *con, const char *params, struct rte_tel_data *d)
{
	struct pf_route_result res = { 0 };
	struct pf_route_op op;
	const char *bad = pf_learnt_parse(con->rt, params, &op);

	if (bad != NULL) {
		pf_console_error(d, bad);
		return 0;
	}
	if (pf_learnt_apply(con->rt, &op, 1, &res) == 0) {
		pf_console_error(d, "no stage takes learnt routes of this family (give an lpm stage "
				 "learnt: for IPv4, an lpm6 stage for IPv6)");
		return 0;
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "added", res.added);
	rte_tel_data_add_dict_u64(d, "replaced", res.replaced);
	rte_tel_data_add_dict_u64(d, "deleted", res.deleted);
	rte_tel_data_add_dict_u64(d, "unchanged", res.unchanged);
	rte_tel_data_add_dict_u64(d, "missing", res.missing);
	rte_tel_data_add_dict_u64(d, "refused", res.refused);
	rte_tel_data_add_dict_u64(d, "shadowed", res.shadowed);
	return 0;
}

const struct pf_cmd pf_learn_cmds[] = {
	{ "/pipefwd/learn", "pipefwd: a learnt route by hand. Params: add|del,SRC,PREFIX[,GW@PORT...]",
	  cmd_learn, false },
	{ NULL, NULL, NULL, false },
};
