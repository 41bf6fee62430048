/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A one-file FUSE filesystem for the selftests: a forked daemon that
 * answers the kernel on /dev/fuse itself (no libfuse) and serves a buffer
 * as the regular file "code" at the root of its mount.  While ->stall is
 * set it leaves READs unanswered, as a daemon that sleeps would, until
 * UT_FUSE_STALL_MAX seconds after the first: a kernel that waits on it
 * shows a long wait, not a hung test.  The daemon is one thread: while a
 * READ waits, so does every other request; names and attributes are
 * valid for an hour, so that path walks do not ask it again.
 */
#ifndef UPROBE_FUSE_H
#define UPROBE_FUSE_H

#include <linux/fuse.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>

#define UT_FUSE_STALL_MAX 30

/* Shared with the daemon. */
struct ut_fuse {
	volatile int stall;	/* leave READs unanswered for now */
	volatile int stalled;	/* READs that waited */
	volatile int reads;	/* READs answered */
	pid_t pid;
	char dir[64];
	char path[96];		/* dir/code */
	size_t len;
	unsigned char data[];
};

static inline double ut_fuse_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline void ut_fuse_reply(int fd, uint64_t unique, int err,
				 const void *body, size_t len)
{
	struct fuse_out_header h = {
		.len = sizeof(h) + (err ? 0 : len),
		.error = err,
		.unique = unique,
	};
	struct iovec iov[2] = {
		{ &h, sizeof(h) },
		{ (void *)body, err ? 0 : len },
	};

	writev(fd, iov, body && !err ? 2 : 1);
}

static inline void ut_fuse_attr(struct ut_fuse *f, uint64_t node,
				struct fuse_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = node;
	a->blksize = 4096;
	if (node == FUSE_ROOT_ID) {
		a->mode = S_IFDIR | 0755;
		a->nlink = 2;
	} else {
		a->mode = S_IFREG | 0755;
		a->nlink = 1;
		a->size = f->len;
		a->blocks = (f->len + 511) / 512;
	}
}

static inline void ut_fuse_read(int fd, struct ut_fuse *f,
				struct fuse_in_header *ih,
				const struct fuse_read_in *r)
{
	static double stall_end;	/* 0: no READ has waited yet */
	size_t n = 0;

	if (!f->stall) {
		stall_end = 0;
	} else {
		__sync_fetch_and_add(&f->stalled, 1);
		if (!stall_end)
			stall_end = ut_fuse_now() + UT_FUSE_STALL_MAX;
		while (f->stall && ut_fuse_now() < stall_end)
			usleep(10000);
	}
	if (r->offset < f->len)
		n = f->len - r->offset < r->size ? f->len - r->offset : r->size;
	__sync_fetch_and_add(&f->reads, 1);
	ut_fuse_reply(fd, ih->unique, 0, f->data + r->offset, n);
}

static inline void ut_fuse_serve(int fd, struct ut_fuse *f)
{
	static uint64_t in[(FUSE_MIN_READ_BUFFER + 4096) / sizeof(uint64_t)];
	struct fuse_in_header *ih = (void *)in;
	void *arg = ih + 1;
	struct fuse_init_out init = {
		.major = FUSE_KERNEL_VERSION,
		.minor = FUSE_KERNEL_MINOR_VERSION,
		.max_readahead = 1 << 16,
		.max_background = 16,
		.congestion_threshold = 12,
		.max_write = 4096,
		.time_gran = 1,
	};
	struct fuse_entry_out entry;
	struct fuse_attr_out attr;
	/* Cached pages stay across opens, as on a disk file system. */
	struct fuse_open_out open_out = {
		.fh = 1,
		.open_flags = FOPEN_KEEP_CACHE,
	};
	ssize_t n;

	for (;;) {
		n = read(fd, in, sizeof(in));
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN || errno == ENOENT)
				continue;
			_exit(0);	/* ENODEV: unmounted */
		}
		if (n < (ssize_t)sizeof(*ih))
			continue;
		switch (ih->opcode) {
		case FUSE_INIT:
			ut_fuse_reply(fd, ih->unique, 0, &init, sizeof(init));
			break;
		case FUSE_LOOKUP:
			if (ih->nodeid != FUSE_ROOT_ID || strcmp(arg, "code")) {
				ut_fuse_reply(fd, ih->unique, -ENOENT, NULL, 0);
				break;
			}
			memset(&entry, 0, sizeof(entry));
			entry.nodeid = 2;
			entry.entry_valid = 3600;
			entry.attr_valid = 3600;
			ut_fuse_attr(f, 2, &entry.attr);
			ut_fuse_reply(fd, ih->unique, 0, &entry, sizeof(entry));
			break;
		case FUSE_GETATTR:
			memset(&attr, 0, sizeof(attr));
			attr.attr_valid = 3600;
			ut_fuse_attr(f, ih->nodeid, &attr.attr);
			ut_fuse_reply(fd, ih->unique, 0, &attr, sizeof(attr));
			break;
		case FUSE_OPEN:
			ut_fuse_reply(fd, ih->unique, 0, &open_out, sizeof(open_out));
			break;
		case FUSE_READ:
			ut_fuse_read(fd, f, ih, arg);
			break;
		case FUSE_RELEASE:
		case FUSE_FLUSH:
			ut_fuse_reply(fd, ih->unique, 0, NULL, 0);
			break;
		case FUSE_FORGET:
		case FUSE_BATCH_FORGET:
		case FUSE_INTERRUPT:
			break;		/* no answer expected */
		default:
			ut_fuse_reply(fd, ih->unique, -ENOSYS, NULL, 0);
		}
	}
}

/*
 * Mount a FUSE filesystem serving @len bytes of @buf as "code" and fork
 * its daemon; NULL (errno set) without FUSE.
 */
static inline struct ut_fuse *ut_fuse_start(const void *buf, size_t len)
{
	struct ut_fuse *f;
	char opts[128];
	int fd, err;

	f = mmap(NULL, sizeof(*f) + len, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (f == MAP_FAILED)
		return NULL;
	f->len = len;
	memcpy(f->data, buf, len);
	strcpy(f->dir, "/tmp/ut_fuse.XXXXXX");
	fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd < 0 || !mkdtemp(f->dir))
		goto fail;
	snprintf(f->path, sizeof(f->path), "%s/code", f->dir);
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=40000,user_id=%u,group_id=%u,allow_other", fd,
		 getuid(), getgid());
	if (mount("ut_fuse", f->dir, "fuse", MS_NOSUID | MS_NODEV, opts)) {
		err = errno;
		rmdir(f->dir);
		errno = err;
		goto fail;
	}
	fflush(stdout);
	fflush(stderr);
	f->pid = fork();
	if (!f->pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		ut_fuse_serve(fd, f);
	}
	close(fd);
	if (f->pid < 0) {
		umount2(f->dir, MNT_DETACH);
		rmdir(f->dir);
		goto fail_unmap;
	}
	return f;
fail:
	if (fd >= 0)
		close(fd);
fail_unmap:
	err = errno;
	munmap(f, sizeof(*f) + len);
	errno = err;
	return NULL;
}

/* Answer every read, unmount (lazily: probes may still hold the file). */
static inline void ut_fuse_stop(struct ut_fuse *f)
{
	if (!f)
		return;
	f->stall = 0;
	umount2(f->dir, MNT_DETACH);
	rmdir(f->dir);
	if (f->pid > 0) {
		kill(f->pid, SIGKILL);
		waitpid(f->pid, NULL, 0);
	}
	munmap(f, sizeof(*f) + f->len);
}

#endif /* UPROBE_FUSE_H */
