/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The EAL arguments, read as DPDK 22.11's rte_eal_init reads them (see
 * pf_eal.h): EAL's getopt_long table, so an abbreviation or a value in the
 * next argument is seen as EAL will see it, and checked before EAL runs.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pf_eal.h"

/* The options pipefwd looks at; every other one is EAL_OTHER. */
enum {
	EAL_OTHER = 256,
	EAL_FILE_PREFIX,
	EAL_NO_SHCONF,
	EAL_IN_MEMORY,
	EAL_LCORES,
	EAL_MAIN_LCORE,
	EAL_SOCKET_MEM,
	EAL_SOCKET_LIMIT,
	EAL_NO_HUGE,
};

struct eal_opt {
	const char *name;
	int has_arg;          /* 0 none, 1 required, 2 optional (only as --name=value) */
	int id;
};

/* eal_long_options[] of DPDK 22.11 (lib/eal/common/eal_common_options.c). */
static const struct eal_opt eal_long[] = {
	{ "base-virtaddr", 1, EAL_OTHER },
	{ "create-uio-dev", 0, EAL_OTHER },
	{ "file-prefix", 1, EAL_FILE_PREFIX },
	{ "help", 0, EAL_OTHER },
	{ "huge-dir", 1, EAL_OTHER },
	{ "huge-unlink", 2, EAL_OTHER },
	{ "huge-worker-stack", 2, EAL_OTHER },
	{ "iova-mode", 1, EAL_OTHER },
	{ "lcores", 1, EAL_LCORES },
	{ "log-level", 1, EAL_OTHER },
	{ "trace", 1, EAL_OTHER },
	{ "trace-dir", 1, EAL_OTHER },
	{ "trace-bufsz", 1, EAL_OTHER },
	{ "trace-mode", 1, EAL_OTHER },
	{ "main-lcore", 1, EAL_MAIN_LCORE },
	{ "mbuf-pool-ops-name", 1, EAL_OTHER },
	{ "no-hpet", 0, EAL_OTHER },
	{ "no-huge", 0, EAL_NO_HUGE },
	{ "no-pci", 0, EAL_OTHER },
	{ "no-shconf", 0, EAL_NO_SHCONF },
	{ "in-memory", 0, EAL_IN_MEMORY },
	{ "block", 1, EAL_OTHER },
	{ "allow", 1, EAL_OTHER },
	{ "proc-type", 1, EAL_OTHER },
	{ "socket-mem", 1, EAL_SOCKET_MEM },
	{ "socket-limit", 1, EAL_SOCKET_LIMIT },
	{ "syslog", 1, EAL_OTHER },
	{ "vdev", 1, EAL_OTHER },
	{ "vfio-intr", 1, EAL_OTHER },
	{ "vfio-vf-token", 1, EAL_OTHER },
	{ "vmware-tsc-map", 0, EAL_OTHER },
	{ "legacy-mem", 0, EAL_OTHER },
	{ "single-file-segments", 0, EAL_OTHER },
	{ "match-allocations", 0, EAL_OTHER },
	{ "telemetry", 0, EAL_OTHER },
	{ "no-telemetry", 0, EAL_OTHER },
	{ "force-max-simd-bitwidth", 1, EAL_OTHER },
};

/* eal_short_options of DPDK 22.11: a letter followed by ':' takes a value. */
static const char eal_short[] = "a:b:c:s:d:hl:S:m:n:r:v";

/* Where an argument came from, for a message: "eal[3]" (at its node) or the command line. */
struct eal_where {
	const struct pf_node *node;
	char what[32];
};

static void
where_set(struct eal_where *w, const struct pf_node *const *nodes, int i)
{
	w->node = nodes != NULL ? nodes[i] : NULL;
	if (nodes != NULL)
		snprintf(w->what, sizeof(w->what), "eal[%d]", i);
	else
		snprintf(w->what, sizeof(w->what), "command line");
}

/*
 * Whether @p prefix is a plain name EAL can make a directory of beneath its
 * runtime directory: letters, digits, '_', '-' and '.' (not first), 1 to
 * PF_EAL_PREFIX_MAX characters. No '/', no "..".
 */
static bool
pf_eal_prefix_ok(const char *p)
{
	size_t n = strlen(p), i;

	if (n == 0 || n > PF_EAL_PREFIX_MAX || p[0] == '.')
		return false;
	for (i = 0; i < n; i++)
		if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z') ||
		      (p[i] >= '0' && p[i] <= '9') || p[i] == '_' || p[i] == '-' || p[i] == '.'))
			return false;
	return true;
}

bool
pf_eal_lcore_on(const struct pf_eal *e, unsigned int id)
{
	if (!e->has_lcores)
		return id < PF_EAL_MAX_LCORE;
	return id < PF_EAL_MAX_LCORE && (e->lcore_set[id / 64] >> (id % 64)) & 1;
}

unsigned int
pf_eal_main_lcore(const struct pf_eal *e)
{
	unsigned int id;

	if (e->has_main)
		return e->main_lcore;
	for (id = 0; e->has_lcores && id < PF_EAL_MAX_LCORE; id++)
		if (pf_eal_lcore_on(e, id))
			return id;
	return 0;
}

/* A decimal number, digits only (EAL reads these with atoi or strtoull). */
static bool
eal_number(const char *s, const char **end, unsigned long long *v)
{
	char *e;

	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	*v = strtoull(s, &e, 10);
	*end = e;
	return errno == 0;
}

/* Set lcores @p a..@p b in @p set; false when out of range. */
static bool
set_range(uint64_t *set, unsigned long long a, unsigned long long b)
{
	if (a > b || b >= PF_EAL_MAX_LCORE)
		return false;
	for (; a <= b; a++)
		set[a / 64] |= 1ull << (a % 64);
	return true;
}

/* "N" or "N-M" at *@p p, up to a character of @p stop; advances *p. */
static bool
lcore_item(const char **p, const char *stop, uint64_t *set)
{
	unsigned long long a, b;
	const char *e;

	if (!eal_number(*p, &e, &a))
		return false;
	b = a;
	if (*e == '-' && !eal_number(e + 1, &e, &b))
		return false;
	if (*e != '\0' && strchr(stop, *e) == NULL)
		return false;
	*p = e;
	return set_range(set, a, b);
}

/*
 * The lcore ids of -l LIST ("0-3,5"), -c MASK (hex) or --lcores MAP
 * ("1,(2-4)@(0-1),5@1": lcores, ranges or groups, each optionally "@cpus")
 * into @p set. False when EAL would refuse the syntax.
 */
static bool
eal_lcores(int id, const char *v, uint64_t *set)
{
	const char *p = v;
	size_t n, i;

	if (id == 'c') {
		if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
			p += 2;
		n = strlen(p);
		if (n == 0)
			return false;
		for (i = 0; i < n; i++) {
			const char c = p[n - 1 - i];
			unsigned int d = isdigit((unsigned char)c) ? (unsigned int)(c - '0') :
					 isxdigit((unsigned char)c) ?
					 (unsigned int)(tolower((unsigned char)c) - 'a' + 10) : 99;

			if (d == 99)
				return false;
			for (unsigned int b = 0; b < 4; b++)
				if ((d >> b) & 1 && !set_range(set, i * 4 + b, i * 4 + b))
					return false;
		}
		return true;
	}
	for (;;) {
		if (id == EAL_LCORES && *p == '(') {
			for (p++;;) {
				if (!lcore_item(&p, ",)", set))
					return false;
				if (*p++ == ')')
					break;
			}
		} else if (!lcore_item(&p, id == EAL_LCORES ? ",@" : ",", set)) {
			return false;
		}
		if (id == EAL_LCORES && *p == '@') {
			/* The CPUs: a number, a range or a group; not lcores. */
			p++;
			if (*p == '(')
				p = strchr(p, ')') != NULL ? strchr(p, ')') + 1 : p + strlen(p);
			else
				p += strspn(p, "0123456789-");
		}
		if (*p == '\0')
			return true;
		if (*p++ != ',')
			return false;
	}
}

/* -m MB, --socket-mem and --socket-limit MB[,MB...]: what EAL's atoi would misread. */
static bool
eal_sizes(const char *v, bool list)
{
	unsigned long long mb;
	const char *e = v;
	unsigned int n = 0;

	do {
		if (n++ > 0)
			v = e + 1;
		if (!eal_number(v, &e, &mb) || mb > (1ull << 32))
			return false;
	} while (list && *e == ',');
	return *e == '\0';
}

/* What one option means to pipefwd; @p v is its value (NULL when it takes none). */
static int
eal_apply(struct pf_eal *e, int id, const char *shown, const char *v, const struct eal_where *w,
	  struct pf_errs *errs)
{
	switch (id) {
	case EAL_FILE_PREFIX:
		/* EAL makes <runtime dir>/<prefix> and pipefwd removes what it put
		 * there at exit: anything but a plain name would aim both elsewhere. */
		if (!pf_eal_prefix_ok(v))
			return pf_node_err(errs, w->node,
					   "%s: --file-prefix '%s' is not a plain name: EAL makes it a directory beneath its runtime directory, so it takes letters, digits, '_', '-' and '.' (not first), at most %d of them",
					   w->what, v, PF_EAL_PREFIX_MAX);
		snprintf(e->prefix, sizeof(e->prefix), "%s", v);
		break;
	case EAL_NO_SHCONF:
	case EAL_IN_MEMORY:
		e->no_shconf = true;
		break;
	case 'l':
	case 'c':
	case EAL_LCORES:
		/* EAL refuses a second one ("Option -l is ignored, because ..."). */
		if (e->has_lcores)
			return pf_node_err(errs, w->node,
					   "%s: %s after %s: EAL takes one lcore set (-l, -c or --lcores)",
					   w->what, shown, e->lcores_opt);
		if (!eal_lcores(id, v, e->lcore_set))
			return pf_node_err(errs, w->node,
					   "%s: %s '%s': not an lcore %s of ids 0-%d", w->what, shown,
					   v, id == 'c' ? "mask" : "list", PF_EAL_MAX_LCORE - 1);
		e->has_lcores = true;
		snprintf(e->lcores_opt, sizeof(e->lcores_opt), "%s %.40s", shown, v);
		break;
	case EAL_MAIN_LCORE: {
		unsigned long long id_v;
		const char *end;

		if (!eal_number(v, &end, &id_v) || *end != '\0' || id_v >= PF_EAL_MAX_LCORE)
			return pf_node_err(errs, w->node, "%s: --main-lcore '%s': not an lcore id 0-%d",
					   w->what, v, PF_EAL_MAX_LCORE - 1);
		e->has_main = true;
		e->main_lcore = (unsigned int)id_v;
		break;
	}
	case 'm':
		/* EAL's atoi: "abc" is 0 (its default size), "1G" is 1 MB. */
		if (!eal_sizes(v, false))
			return pf_node_err(errs, w->node, "%s: -m '%s': a size in megabytes (digits only)",
					   w->what, v);
		e->mem = true;
		break;
	case EAL_SOCKET_MEM:
	case EAL_SOCKET_LIMIT:
		if (!eal_sizes(v, true))
			return pf_node_err(errs, w->node,
					   "%s: %s '%s': megabytes per NUMA socket, as N[,N...] (digits only)",
					   w->what, shown, v);
		if (id == EAL_SOCKET_MEM)
			e->socket_mem = true;
		break;
	case EAL_NO_HUGE:
		e->no_huge = true;
		break;
	default:
		break;
	}
	/* The pairs EAL refuses together (eal_check_common_options). */
	if (e->mem && e->socket_mem && (id == 'm' || id == EAL_SOCKET_MEM))
		return pf_node_err(errs, w->node, "%s: -m and --socket-mem together: EAL takes one",
				   w->what);
	if (e->no_huge && e->socket_mem && (id == EAL_NO_HUGE || id == EAL_SOCKET_MEM))
		return pf_node_err(errs, w->node,
				   "%s: --socket-mem with --no-huge: EAL takes --socket-mem only with hugepages (give -m)",
				   w->what);
	return 0;
}

/* The long option "--@p arg" names, as glibc's getopt_long matches it: exactly, or by a
 * unique prefix. NULL (with an error) when it names none or several. */
static const struct eal_opt *
long_find(const char *arg, size_t len, const struct eal_where *w, struct pf_errs *errs)
{
	const struct eal_opt *found = NULL;
	unsigned int i, hits = 0;

	for (i = 0; i < sizeof(eal_long) / sizeof(eal_long[0]); i++) {
		if (strncmp(eal_long[i].name, arg, len) != 0)
			continue;
		if (strlen(eal_long[i].name) == len)
			return &eal_long[i];
		found = &eal_long[i];
		hits++;
	}
	if (hits == 1)
		return found;
	pf_node_err(errs, w->node, "%s: '--%.*s' is %s EAL option", w->what, (int)len, arg,
		    hits == 0 ? "not an" : "an ambiguous abbreviation of more than one");
	return NULL;
}

int
pf_eal_read(struct pf_eal *e, int argc, char *const *argv, const struct pf_node *const *nodes,
	    struct pf_errs *errs)
{
	unsigned int before = errs->n;
	struct eal_where w, wv;
	int i;

	for (i = 0; i < argc; i++) {
		const char *a = argv[i];

		where_set(&w, nodes, i);
		if (a[0] != '-' || a[1] == '\0') {
			/* getopt_long moves it behind the options: EAL never reads it. */
			pf_node_err(errs, w.node, "%s: '%s' is not an EAL option (a value without its option?)",
				    w.what, a);
			continue;
		}
		if (a[1] == '-') {
			const char *name = a + 2, *eq = strchr(name, '=');
			size_t len = eq != NULL ? (size_t)(eq - name) : strlen(name);
			const struct eal_opt *o;
			const char *v = NULL;
			char lshown[32];

			if (len == 0) {
				/* "--": EAL stops there, pipefwd's own arguments after it would be lost. */
				pf_node_err(errs, w.node, "%s: '--' would end EAL's options early", w.what);
				continue;
			}
			o = long_find(name, len, &w, errs);
			if (o == NULL)
				continue;
			wv = w;
			if (eq != NULL && o->has_arg == 0) {
				pf_node_err(errs, w.node, "%s: --%s takes no value", w.what, o->name);
				continue;
			}
			if (eq != NULL) {
				v = eq + 1;
			} else if (o->has_arg == 1) {
				if (i + 1 >= argc) {
					pf_node_err(errs, w.node, "%s: --%s needs a value", w.what, o->name);
					continue;
				}
				v = argv[++i];
				where_set(&wv, nodes, i);
			}
			snprintf(lshown, sizeof(lshown), "--%s", o->name);
			eal_apply(e, o->id, lshown, v, &wv, errs);
			continue;
		}
		/* Short options, grouped as getopt allows: "-vl0-3" is -v, then -l 0-3. */
		for (const char *c = a + 1; *c != '\0'; c++) {
			const char *s = strchr(eal_short, *c), *v = NULL;
			char shown[3] = { '-', *c, '\0' };

			if (*c == ':' || s == NULL) {
				pf_node_err(errs, w.node, "%s: '-%c' is not an EAL option", w.what, *c);
				break;
			}
			wv = w;
			if (s[1] == ':') {
				if (c[1] != '\0') {
					v = c + 1;
				} else if (i + 1 < argc) {
					v = argv[++i];
					where_set(&wv, nodes, i);
				} else {
					pf_node_err(errs, w.node, "%s: -%c needs a value", w.what, *c);
					break;
				}
			}
			eal_apply(e, *c, shown, v, &wv, errs);
			if (v != NULL)
				break;
		}
	}
	return errs->n == before ? 0 : -EINVAL;
}
