/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where a capture may be written. A FILE lies beneath the capture directory
 * (pipefwd --capture-dir, default the DPDK runtime directory's captures/):
 * relative to it, or absolute inside it. It is opened without leaving the
 * directory and without following symlinks (openat2 RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS), without blocking (a FIFO is refused), and never
 * replaces a file that is not a capture pipefwd wrote.
 */
#include "capture.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/openat2.h>
#include <unistd.h>

#include <rte_eal.h>

static int
file_fail(char *err, size_t len, const char *fmt, ...) __rte_format_printf(3, 4);

static int
file_fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static char dir_path[PATH_MAX];               /* "": the default, made on first use */
static bool dir_given;

void
cap_dir_set(const char *dir)
{
	char real[PATH_MAX];

	dir_given = dir != NULL;
	if (dir == NULL)
		dir_path[0] = '\0';
	else   /* compare absolute paths against the resolved directory */
		snprintf(dir_path, sizeof(dir_path), "%s", realpath(dir, real) != NULL ? real : dir);
}

const char *
cap_dir(void)
{
	if (!dir_given && dir_path[0] == '\0')
		snprintf(dir_path, sizeof(dir_path), "%s/captures", rte_eal_get_runtime_dir());
	return dir_path;
}

/* Open @p rel beneath @p dfd: no "..", no symlink anywhere, never blocking. */
static int
cap_openat(int dfd, const char *rel, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC),
		.mode = (flags & O_CREAT) ? 0600 : 0,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	char buf[PATH_MAX], *p, *save = NULL, *next;
	int fd, cur;

	fd = (int)syscall(SYS_openat2, dfd, rel, &how, sizeof(how));
	if (fd >= 0 || errno != ENOSYS)
		return fd;
	/* Kernels before 5.6: walk the components, none of them a symlink. */
	snprintf(buf, sizeof(buf), "%s", rel);
	cur = dup(dfd);
	for (p = strtok_r(buf, "/", &save); p != NULL && cur >= 0; p = next) {
		next = strtok_r(NULL, "/", &save);
		fd = openat(cur, p, next == NULL ? (int)how.flags :
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0600);
		close(cur);
		if (fd < 0)
			return -1;
		if (next == NULL)
			return fd;
		cur = fd;
	}
	if (cur >= 0)
		close(cur);
	errno = EINVAL;
	return -1;
}

/* A file pipefwd may overwrite: a regular file of ours holding a pipefwd pcapng. */
static bool
cap_ours(int fd)
{
	char head[1024];
	struct stat sb;
	ssize_t got;

	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid())
		return false;
	got = pread(fd, head, sizeof(head) - 1, 0);
	if (got < 28 || memcmp(head, "\x0a\x0d\x0d\x0a", 4) != 0)
		return false;   /* not a pcapng section header */
	head[got] = '\0';
	return memmem(head, (size_t)got, "pipefwd capture of ", 19) != NULL;
}

/*
 * Open @p path for writing, beneath the capture directory only: a relative
 * path, or an absolute one inside the directory; no "..", no symlink; a new
 * file, or with @p overwrite a pipefwd capture file. Never blocks (a FIFO is
 * refused). Returns the fd, or -errno with the error set.
 */
int
cap_file_open(const char *path, bool overwrite, bool *created, char *err, size_t len)
{
	const char *dir = cap_dir(), *rel = path, *c;
	size_t dl = strlen(dir);
	int dfd, fd, e;

	*created = false;
	if (path[0] == '/') {
		if (strncmp(path, dir, dl) != 0 || path[dl] != '/')
			return file_fail(err, len, "%.40s is outside the capture directory %.60s", path,
					dir);
		rel = path + dl + 1;
	}
	while (*rel == '/')
		rel++;
	for (c = rel; c != NULL; c = strchr(c, '/') != NULL ? strchr(c, '/') + 1 : NULL)
		if (strncmp(c, "..", 2) == 0 && (c[2] == '/' || c[2] == '\0'))
			return file_fail(err, len, "'..' is not allowed in a capture path");
	if (*rel == '\0' || rel[strlen(rel) - 1] == '/')
		return file_fail(err, len, "the path names a directory, not a file");
	if (!dir_given && mkdir(dir, 0700) < 0 && errno != EEXIST)
		return file_fail(err, len, "cannot make the capture directory %.60s: %s", dir,
				strerror(errno));
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return file_fail(err, len, "capture directory %.60s: %s", dir, strerror(errno));
	fd = cap_openat(dfd, rel, O_WRONLY | O_CREAT | O_EXCL);
	if (fd >= 0) {
		*created = true;
	} else if (errno == EEXIST && overwrite) {
		fd = cap_openat(dfd, rel, O_RDWR);
		if (fd >= 0 && !cap_ours(fd)) {
			close(fd);
			close(dfd);
			return file_fail(err, len, "%.60s is not a capture file pipefwd wrote: not "
					   "overwritten", rel);
		}
		if (fd >= 0 && ftruncate(fd, 0) < 0) {
			close(fd);
			fd = -1;
		}
	}
	e = errno;
	close(dfd);
	if (fd < 0) {
		if (e == EEXIST)
			return file_fail(err, len, "%.60s exists (add the option overwrite: pipefwd-ctl "
					   "capture --force)", rel);
		return file_fail(err, len, "%.60s: %s", rel, e == ELOOP ? "a symlink is in the way" :
						     e == EXDEV ? "leaves the capture directory" :
						     e == ENXIO ? "is a FIFO or a device" :
						     strerror(e));
	}
	/* Writes may block on a slow disk, not on a FIFO: back to blocking mode. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

/* Pools and the writer ring: made at the first capture, kept until shutdown. */
