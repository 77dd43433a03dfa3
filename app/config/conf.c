/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * YAML loader with marks and typed accessors (include/pf_conf.h).
 *
 * Built on libyaml's event API rather than its document API so that the
 * loader sees anchors and aliases (refused: no billion laughs) and can
 * detect duplicate keys, which libyaml accepts silently.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml.h>

#include "pf_conf.h"

struct loader {
	yaml_parser_t parser;
	const char *file;
	struct pf_errs *errs;
	int depth;
	bool failed;
};

#define MAX_DEPTH 32
#define MIN2(a, b) ((a) < (b) ? (a) : (b))

static void node_free(struct pf_node *n);

static int
parser_error(struct loader *ld)
{
	yaml_parser_t *p = &ld->parser;
	yaml_mark_t m = p->problem_mark;

	if (p->context != NULL)
		pf_err_add(ld->errs, ld->file, (int)m.line + 1, (int)m.column + 1,
			   "YAML parse error: %s %s", p->problem ? p->problem : "error", p->context);
	else
		pf_err_add(ld->errs, ld->file, (int)m.line + 1, (int)m.column + 1,
			   "YAML parse error: %s", p->problem ? p->problem : "error");
	ld->failed = true;
	return -EINVAL;
}

static int
next_event(struct loader *ld, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&ld->parser, ev))
		return parser_error(ld);
	return 0;
}

static struct pf_node *
node_new(struct loader *ld, enum pf_node_kind kind, const yaml_event_t *ev)
{
	struct pf_node *n = calloc(1, sizeof(*n));

	if (n == NULL)
		return NULL;
	n->kind = kind;
	n->file = ld->file;
	n->line = (int)ev->start_mark.line + 1;
	n->col = (int)ev->start_mark.column + 1;
	return n;
}

static int
node_push(struct pf_node *n, struct pf_node *key, struct pf_node *item)
{
	struct pf_node **items, **keys;

	items = realloc(n->items, (n->n + 1) * sizeof(*items));
	if (items == NULL)
		return -ENOMEM;
	n->items = items;
	if (key != NULL) {
		keys = realloc(n->keys, (n->n + 1) * sizeof(*keys));
		if (keys == NULL)
			return -ENOMEM;
		n->keys = keys;
		n->keys[n->n] = key;
	}
	n->items[n->n++] = item;
	return 0;
}

static int load_node(struct loader *ld, yaml_event_t *ev, struct pf_node **out);

/*
 * A quoted "\e" or "\n" makes control characters: in a name, a path or a device string they
 * would reach logs, terminals and EAL (a NUL would cut the value short unseen).
 */
long
pf_ctl_char_at(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] < 0x20 || s[i] == 0x7f ||
		    (s[i] == 0xc2 && i + 1 < len && s[i + 1] >= 0x80 && s[i + 1] <= 0x9f))
			return (long)i;
	return -1;
}

static int
load_collection(struct loader *ld, struct pf_node *n)
{
	yaml_event_t ev;
	struct pf_node *key, *val;
	uint32_t i;
	int rc;

	for (;;) {
		if (next_event(ld, &ev) < 0)
			return -EINVAL;
		if (ev.type == YAML_SEQUENCE_END_EVENT || ev.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&ev);
			return 0;
		}
		key = NULL;
		if (n->kind == PF_NODE_MAP) {
			rc = load_node(ld, &ev, &key);
			yaml_event_delete(&ev);
			if (rc < 0)
				return rc;
			if (key->kind != PF_NODE_SCALAR) {
				pf_err_add(ld->errs, ld->file, key->line, key->col,
					   "mapping keys must be plain strings");
				ld->failed = true;
			} else {
				for (i = 0; i < n->n; i++) {
					/* Earlier non-scalar keys (already reported) have no value. */
					if (n->keys[i]->kind != PF_NODE_SCALAR ||
					    strcmp(n->keys[i]->value, key->value) != 0)
						continue;
					pf_err_add(ld->errs, ld->file, key->line, key->col,
						   "duplicate key '%s' (first defined at %d:%d)",
						   key->value, n->keys[i]->line, n->keys[i]->col);
					ld->failed = true;
					break;
				}
			}
			if (next_event(ld, &ev) < 0) {
				node_free(key);
				return -EINVAL;
			}
		}
		rc = load_node(ld, &ev, &val);
		yaml_event_delete(&ev);
		if (rc < 0) {
			node_free(key);
			return rc;
		}
		if (node_push(n, key, val) < 0) {
			node_free(key);
			node_free(val);
			return -ENOMEM;
		}
	}
}

/* Build the node that starts with event @p ev (which the caller deletes). */
static int
load_node(struct loader *ld, yaml_event_t *ev, struct pf_node **out)
{
	struct pf_node *n;
	const yaml_char_t *anchor = NULL, *tag;
	long bad;
	int rc = 0;

	*out = NULL;
	switch (ev->type) {
	case YAML_ALIAS_EVENT:
		ld->failed = true;
		return pf_err_add(ld->errs, ld->file, (int)ev->start_mark.line + 1,
				  (int)ev->start_mark.column + 1,
				  "YAML aliases are not supported");
	case YAML_SCALAR_EVENT:
		anchor = ev->data.scalar.anchor;
		n = node_new(ld, PF_NODE_SCALAR, ev);
		if (n == NULL)
			return -ENOMEM;
		n->value = strndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
		n->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
		if (n->value == NULL) {
			free(n);
			return -ENOMEM;
		}
		bad = pf_ctl_char_at((const char *)ev->data.scalar.value, ev->data.scalar.length);
		if (bad >= 0) {
			const unsigned char *c = ev->data.scalar.value + bad;

			pf_err_add(ld->errs, ld->file, n->line, n->col,
				   "a control character (%s%02X) at offset %ld of a string: names, "
				   "paths and device strings are printable text",
				   c[0] == 0xc2 ? "U+00" : "\\x", c[0] == 0xc2 ? c[1] : c[0], bad);
			ld->failed = true;
		}
		break;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		anchor = ev->type == YAML_SEQUENCE_START_EVENT ? ev->data.sequence_start.anchor :
								  ev->data.mapping_start.anchor;
		n = node_new(ld, ev->type == YAML_SEQUENCE_START_EVENT ? PF_NODE_SEQ : PF_NODE_MAP,
			     ev);
		if (n == NULL)
			return -ENOMEM;
		if (++ld->depth > MAX_DEPTH) {
			ld->failed = true;
			node_free(n);
			return pf_err_add(ld->errs, ld->file, (int)ev->start_mark.line + 1,
					  (int)ev->start_mark.column + 1,
					  "nesting deeper than %d levels", MAX_DEPTH);
		}
		rc = load_collection(ld, n);
		ld->depth--;
		if (rc < 0) {
			node_free(n);
			return rc;
		}
		break;
	default:
		ld->failed = true;
		return pf_err_add(ld->errs, ld->file, (int)ev->start_mark.line + 1,
				  (int)ev->start_mark.column + 1, "unexpected YAML event");
	}
	if (anchor != NULL) {
		pf_err_add(ld->errs, ld->file, n->line, n->col, "YAML anchors are not supported");
		ld->failed = true;
	}
	/* An explicit tag (!!binary, !!str, !foo) would change what a value means. */
	tag = ev->type == YAML_SCALAR_EVENT ? ev->data.scalar.tag :
	      ev->type == YAML_SEQUENCE_START_EVENT ? ev->data.sequence_start.tag :
	      ev->data.mapping_start.tag;
	if (tag != NULL) {
		pf_err_add(ld->errs, ld->file, n->line, n->col,
			   "YAML tags are not supported ('%.40s')", (const char *)tag);
		ld->failed = true;
	}
	*out = n;
	return 0;
}

static void
node_free(struct pf_node *n)
{
	uint32_t i;

	if (n == NULL)
		return;
	for (i = 0; i < n->n; i++) {
		node_free(n->items[i]);
		if (n->keys != NULL)
			node_free(n->keys[i]);
	}
	free(n->items);
	free(n->keys);
	free((char *)n->value);
	free(n);
}

void
pf_conf_free(struct pf_doc *doc)
{
	if (doc == NULL)
		return;
	node_free(doc->root);
	free(doc->file);
	free(doc);
}

int
pf_conf_load_string(const char *name, const char *text, size_t len, struct pf_doc **out,
		    struct pf_errs *errs)
{
	struct loader ld = { .errs = errs };
	struct pf_doc *doc;
	yaml_event_t ev;
	int rc = 0;

	*out = NULL;
	if (len > PF_CONF_MAX_BYTES)
		return pf_err_add(errs, name, 0, 0, "config file exceeds %u bytes",
				  PF_CONF_MAX_BYTES);
	doc = calloc(1, sizeof(*doc));
	if (doc == NULL || (doc->file = strdup(name)) == NULL) {
		free(doc);
		return -ENOMEM;
	}
	ld.file = doc->file;
	yaml_parser_initialize(&ld.parser);
	yaml_parser_set_input_string(&ld.parser, (const unsigned char *)text, len);

	/* STREAM-START, then DOCUMENT-START or STREAM-END (empty file). */
	if (next_event(&ld, &ev) < 0)
		goto fail;
	yaml_event_delete(&ev);
	if (next_event(&ld, &ev) < 0)
		goto fail;
	if (ev.type == YAML_DOCUMENT_START_EVENT) {
		yaml_event_delete(&ev);
		if (next_event(&ld, &ev) < 0)
			goto fail;
		rc = load_node(&ld, &ev, &doc->root);
		yaml_event_delete(&ev);
		if (rc < 0)
			goto fail;
		if (next_event(&ld, &ev) < 0) /* DOCUMENT-END */
			goto fail;
		yaml_event_delete(&ev);
		if (next_event(&ld, &ev) < 0)
			goto fail;
		if (ev.type != YAML_STREAM_END_EVENT) {
			pf_err_add(errs, ld.file, (int)ev.start_mark.line + 1,
				   (int)ev.start_mark.column + 1,
				   "only one YAML document is allowed per file");
			ld.failed = true;
		}
	}
	yaml_event_delete(&ev);
	/* An empty document is a plain null scalar: treat it as empty too. */
	if (doc->root != NULL && doc->root->kind == PF_NODE_SCALAR && !doc->root->quoted &&
	    (doc->root->value[0] == '\0' || strcmp(doc->root->value, "~") == 0 ||
	     strcmp(doc->root->value, "null") == 0)) {
		node_free(doc->root);
		doc->root = NULL;
	}
	yaml_parser_delete(&ld.parser);
	if (ld.failed) {
		pf_conf_free(doc);
		return -EINVAL;
	}
	*out = doc;
	return 0;
fail:
	yaml_parser_delete(&ld.parser);
	pf_conf_free(doc);
	return rc < 0 && rc != -EINVAL ? rc : -EINVAL;
}

const char *
pf_file_kind(unsigned int mode)
{
	return S_ISREG(mode) ? "a regular file" : S_ISDIR(mode) ? "a directory" :
	       S_ISFIFO(mode) ? "a FIFO" : S_ISCHR(mode) ? "a character device" :
	       S_ISBLK(mode) ? "a block device" : S_ISSOCK(mode) ? "a socket" :
	       S_ISLNK(mode) ? "a symbolic link" : "a special file";
}

int
pf_file_open_regular(const char *path, uint64_t max, struct stat *sb, const char **kind)
{
	int fd, err;

	*kind = NULL;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		/* A FIFO or a device that refuses to open still has a type. */
		if (stat(path, sb) == 0 && !S_ISREG(sb->st_mode))
			goto bad_type;
		return -err;
	}
	if (fstat(fd, sb) < 0) {
		err = errno;
		close(fd);
		return -err;
	}
	if (S_ISREG(sb->st_mode)) {
		if ((uint64_t)sb->st_size <= max)
			return fd;
		close(fd);
		return -EFBIG;
	}
	close(fd);
bad_type:
	*kind = pf_file_kind(sb->st_mode);
	return S_ISDIR(sb->st_mode) ? -EISDIR : -EINVAL;
}

int
pf_conf_load_file(const char *path, struct pf_doc **out, struct pf_errs *errs)
{
	const char *kind;
	struct stat stb;
	char *buf;
	FILE *f;
	size_t got;
	int fd, rc;

	*out = NULL;
	fd = pf_file_open_regular(path, PF_CONF_MAX_BYTES, &stb, &kind);
	if (fd == -EFBIG)
		return pf_err_add(errs, path, 0, 0, "config file exceeds %u bytes",
				  PF_CONF_MAX_BYTES);
	if (fd < 0 && kind != NULL)
		return pf_err_add(errs, path, 0, 0, "is %s, not a regular file", kind);
	if (fd < 0)
		return pf_err_add(errs, path, 0, 0, "cannot open: %s", strerror(-fd));
	f = fdopen(fd, "rb");
	if (f == NULL) {
		close(fd);
		return -ENOMEM;
	}
	buf = malloc((size_t)stb.st_size + 1);
	if (buf == NULL) {
		fclose(f);
		return -ENOMEM;
	}
	/* At most the size it had when opened: a file growing meanwhile is read cut. */
	got = fread(buf, 1, (size_t)stb.st_size, f);
	fclose(f);
	buf[got] = '\0';
	rc = pf_conf_load_string(path, buf, got, out, errs);
	free(buf);
	return rc;
}

/* ---- editing a loaded tree (live port changes, app/config/topology.c) ---- */

struct pf_node *
pf_node_new(const struct pf_doc *doc, enum pf_node_kind kind, const char *value, int line)
{
	struct pf_node *n = calloc(1, sizeof(*n));

	if (n == NULL)
		return NULL;
	n->kind = kind;
	n->file = doc->file;
	n->line = line;
	n->col = 1;
	if (value != NULL) {
		n->value = strdup(value);
		if (n->value == NULL) {
			free(n);
			return NULL;
		}
		n->quoted = true;
	}
	return n;
}

int
pf_node_append(struct pf_node *coll, struct pf_node *key, struct pf_node *item)
{
	if (node_push(coll, key, item) < 0) {
		node_free(key);
		node_free(item);
		return -ENOMEM;
	}
	return 0;
}

static uint64_t
fnv(uint64_t h, const void *p, size_t len)
{
	const unsigned char *c = p;

	while (len-- > 0)
		h = (h ^ *c++) * 1099511628211ull;
	return h;
}

uint64_t
pf_node_hash(const struct pf_node *n)
{
	uint64_t h = 14695981039346656037ull, sum = 0, k;
	uint32_t i;

	if (n == NULL)
		return h;
	h = fnv(h, &n->kind, sizeof(n->kind));
	if (n->kind == PF_NODE_SCALAR)
		return fnv(h, n->value, strlen(n->value));
	for (i = 0; i < n->n; i++) {
		k = pf_node_hash(n->items[i]);
		if (n->kind == PF_NODE_SEQ) {
			h = fnv(h, &k, sizeof(k));
			continue;
		}
		/* A mapping's order does not count (as node_equal): a sum of its pairs. */
		k ^= pf_node_hash(n->keys[i]) * 31;
		sum += fnv(14695981039346656037ull, &k, sizeof(k));
	}
	return n->kind == PF_NODE_MAP ? fnv(h, &sum, sizeof(sum)) : h;
}

void
pf_node_free(struct pf_node *n)
{
	node_free(n);
}

void
pf_node_remove(struct pf_node *coll, uint32_t i)
{
	if (i >= coll->n)
		return;
	node_free(coll->items[i]);
	if (coll->keys != NULL)
		node_free(coll->keys[i]);
	memmove(&coll->items[i], &coll->items[i + 1], (coll->n - i - 1) * sizeof(coll->items[0]));
	if (coll->keys != NULL)
		memmove(&coll->keys[i], &coll->keys[i + 1], (coll->n - i - 1) * sizeof(coll->keys[0]));
	coll->n--;
}

const struct pf_node *
pf_map_get(const struct pf_node *map, const char *key)
{
	uint32_t i;

	if (map == NULL || map->kind != PF_NODE_MAP)
		return NULL;
	for (i = 0; i < map->n; i++)
		if (strcmp(map->keys[i]->value, key) == 0)
			return map->items[i];
	return NULL;
}

int
pf_node_err(struct pf_errs *errs, const struct pf_node *n, const char *fmt, ...)
{
	char msg[PF_ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n == NULL)
		return pf_err_add(errs, NULL, 0, 0, "%s", msg);
	return pf_err_add(errs, n->file, n->line, n->col, "%s", msg);
}

/* Levenshtein distance, small strings only: for "did you mean". */
static unsigned int
edit_distance(const char *a, const char *b)
{
	unsigned int d[64][64], i, j, la = strlen(a), lb = strlen(b);

	if (la >= 64 || lb >= 64)
		return 99;
	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++)
		for (j = 1; j <= lb; j++) {
			unsigned int c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			c = MIN2(c, d[i - 1][j] + 1);
			d[i][j] = MIN2(c, d[i][j - 1] + 1);
		}
	return d[la][lb];
}

int
pf_map_check_keys(const struct pf_node *map, const char *path, const char *const *allowed,
		  struct pf_errs *errs)
{
	const char *best;
	unsigned int bestd, dd;
	uint32_t i;
	int j, rc = 0;

	if (map == NULL || map->kind != PF_NODE_MAP)
		return 0;
	for (i = 0; i < map->n; i++) {
		const char *k = map->keys[i]->value;
		bool ok = false;

		best = NULL;
		bestd = 3;
		for (j = 0; allowed[j] != NULL; j++) {
			if (strcmp(k, allowed[j]) == 0) {
				ok = true;
				break;
			}
			dd = edit_distance(k, allowed[j]);
			if (dd < bestd) {
				bestd = dd;
				best = allowed[j];
			}
		}
		if (ok)
			continue;
		if (best != NULL)
			rc = pf_node_err(errs, map->keys[i], "%s%sunknown key '%s' (did you mean '%s'?)",
					 path ? path : "", path && *path ? ": " : "", k, best);
		else
			rc = pf_node_err(errs, map->keys[i], "%s%sunknown key '%s'", path ? path : "",
					 path && *path ? ": " : "", k);
	}
	return rc;
}

static const char *const kind_names[] = { "scalar", "sequence", "mapping" };

int
pf_node_expect(const struct pf_node *n, enum pf_node_kind kind, const char *path,
	       struct pf_errs *errs)
{
	if (n == NULL)
		return -EINVAL;
	if (n->kind == kind)
		return 0;
	return pf_node_err(errs, n, "%s: expected %s, got %s", path, kind_names[kind],
			   kind_names[n->kind]);
}

static int
expect_scalar(const struct pf_node *n, const char *path, const char *what, struct pf_errs *errs)
{
	if (n->kind == PF_NODE_SCALAR)
		return 0;
	return pf_node_err(errs, n, "%s: expected %s, got %s", path, what, kind_names[n->kind]);
}

bool
pf_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	/* Decimal only: YAML 1.1 reads 010 as octal, so a leading 0 is refused. */
	if (s == NULL || !isdigit((unsigned char)s[0]) || (s[0] == '0' && s[1] != '\0'))
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return false;
	*out = v;
	return true;
}

int
pf_node_u64(const struct pf_node *n, const char *path, uint64_t min, uint64_t max, uint64_t *out,
	    struct pf_errs *errs)
{
	const char *s;
	uint64_t v;
	size_t i;

	if (expect_scalar(n, path, "unsigned integer", errs) < 0)
		return -EINVAL;
	s = n->value;
	if (n->quoted)
		return pf_node_err(errs, n, "%s: expected unsigned integer, got string '%s'", path, s);
	if (s[0] == '-' && s[1] != '\0' && isdigit((unsigned char)s[1]))
		return pf_node_err(errs, n, "%s: value out of range [%" PRIu64 ", %" PRIu64 "]",
				   path, min, max);
	if (s[0] == '0' && s[1] != '\0' && isdigit((unsigned char)s[1]))
		return pf_node_err(errs, n, "%s: '%s' has a leading zero (YAML 1.1 reads it as octal)",
				   path, s);
	for (i = 0; s[i] != '\0'; i++)
		if (!isdigit((unsigned char)s[i]))
			return pf_node_err(errs, n, "%s: expected unsigned integer, got string '%s'",
					   path, s);
	if (i == 0)
		return pf_node_err(errs, n, "%s: expected unsigned integer, got empty value", path);
	if (!pf_parse_u64(s, &v) || v < min || v > max)
		return pf_node_err(errs, n, "%s: value out of range [%" PRIu64 ", %" PRIu64 "]",
				   path, min, max);
	*out = v;
	return 0;
}

int
pf_node_u32(const struct pf_node *n, const char *path, uint32_t min, uint32_t max, uint32_t *out,
	    struct pf_errs *errs)
{
	uint64_t v;

	if (pf_node_u64(n, path, min, max, &v, errs) < 0)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

int
pf_node_bool(const struct pf_node *n, const char *path, bool *out, struct pf_errs *errs)
{
	if (expect_scalar(n, path, "true or false", errs) < 0)
		return -EINVAL;
	/* Only YAML 1.2 booleans: "on", "yes" and friends are ambiguous. */
	if (!n->quoted && strcmp(n->value, "true") == 0)
		*out = true;
	else if (!n->quoted && strcmp(n->value, "false") == 0)
		*out = false;
	else
		return pf_node_err(errs, n, "%s: expected true or false, got '%s'", path, n->value);
	return 0;
}

int
pf_node_str(const struct pf_node *n, const char *path, const char **out, struct pf_errs *errs)
{
	if (expect_scalar(n, path, "string", errs) < 0)
		return -EINVAL;
	if (n->value[0] == '\0')
		return pf_node_err(errs, n, "%s: expected a non-empty string", path);
	*out = n->value;
	return 0;
}

bool
pf_parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];
	char tail;
	int i;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
		   &tail) != 6 || strlen(s) != 17)
		return false;
	for (i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return true;
}

bool
pf_parse_ipv4(const char *s, uint32_t *addr)
{
	struct in_addr in;

	if (inet_pton(AF_INET, s, &in) != 1)
		return false;
	*addr = ntohl(in.s_addr);
	return true;
}

const char *
pf_parse_ipv6_prefix(const char *s, bool strict, uint8_t addr[16], uint8_t *len)
{
	const char *slash = strchr(s, '/');
	char buf[INET6_ADDRSTRLEN + 1];
	uint64_t l;
	unsigned int i;

	if (slash == NULL)
		return "is not an IPv6 prefix (addr/len)";
	if ((size_t)(slash - s) >= sizeof(buf))
		return "is not an IPv6 address";
	memcpy(buf, s, (size_t)(slash - s));
	buf[slash - s] = '\0';
	if (inet_pton(AF_INET6, buf, addr) != 1)
		return "is not an IPv6 address";
	if (!pf_parse_u64(slash + 1, &l))
		return "has no valid prefix length";
	if (l > 128)
		return "has a prefix length > 128";
	for (i = 0; strict && i < 16; i++)
		if (addr[i] & (uint8_t)(l >= (i + 1) * 8 ? 0 : l <= i * 8 ? 0xff : 0xff >> (l - i * 8)))
			return "has host bits set";
	*len = (uint8_t)l;
	return NULL;
}

int
pf_node_ipv6_prefix(const struct pf_node *n, const char *path, bool strict, uint8_t addr[16],
		    uint8_t *len, struct pf_errs *errs)
{
	const char *why;

	if (expect_scalar(n, path, "IPv6 prefix", errs) < 0)
		return -EINVAL;
	why = pf_parse_ipv6_prefix(n->value, strict, addr, len);
	if (why != NULL)
		return pf_node_err(errs, n, "%s: '%s' %s", path, n->value, why);
	return 0;
}

int
pf_node_mac(const struct pf_node *n, const char *path, uint8_t mac[6], struct pf_errs *errs)
{
	if (expect_scalar(n, path, "MAC address", errs) < 0)
		return -EINVAL;
	if (!pf_parse_mac(n->value, mac))
		return pf_node_err(errs, n, "%s: '%s' is not a MAC address (aa:bb:cc:dd:ee:ff)",
				   path, n->value);
	return 0;
}

int
pf_node_ipv4_prefix(const struct pf_node *n, const char *path, bool strict, uint32_t *addr,
		    uint8_t *len, struct pf_errs *errs)
{
	char buf[64], *slash;
	uint64_t l;
	uint32_t a, mask;

	if (expect_scalar(n, path, "IPv4 prefix", errs) < 0)
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", n->value);
	slash = strchr(buf, '/');
	if (slash == NULL)
		return pf_node_err(errs, n, "%s: '%s' is not an IPv4 prefix (a.b.c.d/len)", path,
				   n->value);
	*slash = '\0';
	if (!pf_parse_ipv4(buf, &a))
		return pf_node_err(errs, n, "%s: '%s' is not an IPv4 address", path, buf);
	if (!pf_parse_u64(slash + 1, &l))
		return pf_node_err(errs, n, "%s: '%s' has no valid prefix length", path, n->value);
	if (l > 32)
		return pf_node_err(errs, n, "%s: prefix length %" PRIu64 " > 32", path, l);
	mask = l == 0 ? 0 : ~0u << (32 - l);
	if (strict && (a & ~mask) != 0)
		return pf_node_err(errs, n, "%s: '%s' has host bits set", path, n->value);
	*addr = a;
	*len = (uint8_t)l;
	return 0;
}

int
pf_node_enum(const struct pf_node *n, const char *path, const char *const *words, int *out,
	     struct pf_errs *errs)
{
	char list[256] = "";
	int i;

	if (expect_scalar(n, path, "one word", errs) < 0)
		return -EINVAL;
	for (i = 0; words[i] != NULL; i++) {
		if (strcmp(n->value, words[i]) == 0) {
			*out = i;
			return 0;
		}
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
			 words[i]);
	}
	return pf_node_err(errs, n, "%s: '%s' is not one of: %s", path, n->value, list);
}

void
pf_conf_resolve_path(const char *base_file, const char *rel, char *out, size_t len)
{
	const char *slash = strrchr(base_file, '/');

	if (rel[0] == '/' || slash == NULL)
		snprintf(out, len, "%s", rel);
	else
		snprintf(out, len, "%.*s/%s", (int)(slash - base_file), base_file, rel);
}
