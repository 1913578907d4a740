#include "event_loop.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "xlb_log.h"

#define XLB_LOOP_EVENTS 32

struct handler {
    int fd;
    bool removed;
    bool is_timer;
    bool one_shot;
    uint64_t id; /* one-shot timeouts only */
    xlb_loop_fd_cb fd_cb;
    xlb_loop_timer_cb timer_cb;
    void *arg;
    struct handler *next;
};

struct xlb_loop {
    int epoll_fd;
    bool stopping;
    uint64_t next_timeout_id;
    struct handler *handlers;
};

uint64_t xlb_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

struct xlb_loop *xlb_loop_create(void)
{
    struct xlb_loop *loop = calloc(1, sizeof(*loop));
    if (loop == NULL)
        return NULL;
    loop->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (loop->epoll_fd < 0) {
        free(loop);
        return NULL;
    }
    return loop;
}

static void free_removed(struct xlb_loop *loop)
{
    struct handler **link = &loop->handlers;
    while (*link != NULL) {
        struct handler *h = *link;
        if (!h->removed) {
            link = &h->next;
            continue;
        }
        *link = h->next;
        if (h->is_timer)
            close(h->fd);
        free(h);
    }
}

void xlb_loop_destroy(struct xlb_loop *loop)
{
    if (loop == NULL)
        return;
    for (struct handler *h = loop->handlers; h != NULL; h = h->next)
        h->removed = true;
    free_removed(loop);
    close(loop->epoll_fd);
    free(loop);
}

static struct handler *add_handler(struct xlb_loop *loop, int fd, uint32_t events)
{
    struct handler *h = calloc(1, sizeof(*h));
    if (h == NULL)
        return NULL;
    h->fd = fd;
    struct epoll_event ev = {.events = events, .data.ptr = h};
    if (epoll_ctl(loop->epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        free(h);
        return NULL;
    }
    h->next = loop->handlers;
    loop->handlers = h;
    return h;
}

int xlb_loop_add_fd(struct xlb_loop *loop, int fd, uint32_t events, xlb_loop_fd_cb cb, void *arg)
{
    struct handler *h = add_handler(loop, fd, events);
    if (h == NULL)
        return -1;
    h->fd_cb = cb;
    h->arg = arg;
    return 0;
}

static struct handler *find(struct xlb_loop *loop, int fd)
{
    for (struct handler *h = loop->handlers; h != NULL; h = h->next)
        if (h->fd == fd && !h->removed)
            return h;
    return NULL;
}

int xlb_loop_modify_fd(struct xlb_loop *loop, int fd, uint32_t events)
{
    struct handler *h = find(loop, fd);
    if (h == NULL)
        return -1;
    struct epoll_event ev = {.events = events, .data.ptr = h};
    return epoll_ctl(loop->epoll_fd, EPOLL_CTL_MOD, fd, &ev);
}

void xlb_loop_remove_fd(struct xlb_loop *loop, int fd)
{
    struct handler *h = find(loop, fd);
    if (h == NULL)
        return;
    epoll_ctl(loop->epoll_fd, EPOLL_CTL_DEL, fd, NULL);
    /* Freed after the current dispatch round: an event for it may still be pending there. */
    h->removed = true;
}

static struct handler *add_timerfd(struct xlb_loop *loop, uint64_t delay_ms, bool periodic,
                                   xlb_loop_timer_cb cb, void *arg)
{
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (fd < 0)
        return NULL;
    /* A zero it_value would disarm the timer: a zero delay fires after 1 ns. */
    struct timespec delay = {.tv_sec = (time_t)(delay_ms / 1000),
                             .tv_nsec = delay_ms ? (long)(delay_ms % 1000) * 1000000 : 1};
    struct itimerspec spec = {.it_value = delay};
    if (periodic)
        spec.it_interval = delay;
    struct handler *h =
        timerfd_settime(fd, 0, &spec, NULL) == 0 ? add_handler(loop, fd, EPOLLIN) : NULL;
    if (h == NULL) {
        close(fd);
        return NULL;
    }
    h->is_timer = true;
    h->one_shot = !periodic;
    h->timer_cb = cb;
    h->arg = arg;
    return h;
}

int xlb_loop_add_timer(struct xlb_loop *loop, unsigned period_ms, xlb_loop_timer_cb cb, void *arg)
{
    return add_timerfd(loop, period_ms, true, cb, arg) ? 0 : -1;
}

uint64_t xlb_loop_add_timeout(struct xlb_loop *loop, uint64_t delay_ms, xlb_loop_timer_cb cb,
                              void *arg)
{
    struct handler *h = add_timerfd(loop, delay_ms, false, cb, arg);
    if (h == NULL)
        return 0;
    h->id = ++loop->next_timeout_id;
    return h->id;
}

void xlb_loop_cancel(struct xlb_loop *loop, uint64_t id)
{
    for (struct handler *h = loop->handlers; h != NULL && id != 0; h = h->next)
        if (h->one_shot && h->id == id && !h->removed) {
            epoll_ctl(loop->epoll_fd, EPOLL_CTL_DEL, h->fd, NULL);
            h->removed = true;
            return;
        }
}

static void dispatch(struct xlb_loop *loop, struct handler *h, uint32_t events)
{
    if (h->removed)
        return;
    if (!h->is_timer) {
        h->fd_cb(h->fd, events, h->arg);
        return;
    }
    uint64_t expirations;
    if (read(h->fd, &expirations, sizeof(expirations)) != sizeof(expirations))
        return;
    if (h->one_shot) {
        /* Gone before the callback runs, so the callback may add a new one freely. */
        epoll_ctl(loop->epoll_fd, EPOLL_CTL_DEL, h->fd, NULL);
        h->removed = true;
    }
    h->timer_cb(h->arg);
}

int xlb_loop_run(struct xlb_loop *loop)
{
    struct epoll_event events[XLB_LOOP_EVENTS];
    loop->stopping = false;
    while (!loop->stopping) {
        int n = epoll_wait(loop->epoll_fd, events, XLB_LOOP_EVENTS, -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            XLB_LOG(ERR, CONTROL, "epoll_wait: %s", strerror(errno));
            return -1;
        }
        for (int i = 0; i < n; i++)
            dispatch(loop, events[i].data.ptr, events[i].events);
        free_removed(loop);
    }
    return 0;
}

void xlb_loop_stop(struct xlb_loop *loop)
{
    loop->stopping = true;
}
