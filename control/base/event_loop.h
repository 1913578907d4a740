/* The control plane's single-threaded event loop: epoll over file descriptors and timerfds. */
#ifndef XLB_EVENT_LOOP_H
#define XLB_EVENT_LOOP_H

#include <stdint.h>

struct xlb_loop;
typedef void (*xlb_loop_fd_cb)(int fd, uint32_t events, void *arg);
typedef void (*xlb_loop_timer_cb)(void *arg);

struct xlb_loop *xlb_loop_create(void);
void xlb_loop_destroy(struct xlb_loop *loop);

int xlb_loop_add_fd(struct xlb_loop *loop, int fd, uint32_t events, xlb_loop_fd_cb cb, void *arg);
int xlb_loop_modify_fd(struct xlb_loop *loop, int fd, uint32_t events);
/* Safe to call from inside a callback, for any fd including the one being served. */
void xlb_loop_remove_fd(struct xlb_loop *loop, int fd);

/* A periodic timer; returns 0 or -1. Timers live as long as the loop. */
int xlb_loop_add_timer(struct xlb_loop *loop, unsigned period_ms, xlb_loop_timer_cb cb, void *arg);

/* A one-shot timeout: cb runs once after delay_ms. Returns an id for xlb_loop_cancel (> 0), or
 * 0 on failure. The timeout is gone once it has fired or been cancelled. */
uint64_t xlb_loop_add_timeout(struct xlb_loop *loop, uint64_t delay_ms, xlb_loop_timer_cb cb,
                              void *arg);
/* Cancel a timeout that has not fired; ids of fired or unknown timeouts are ignored. */
void xlb_loop_cancel(struct xlb_loop *loop, uint64_t id);

/* Run until xlb_loop_stop; returns 0, or -1 if epoll fails. */
int xlb_loop_run(struct xlb_loop *loop);
void xlb_loop_stop(struct xlb_loop *loop);

/* Monotonic milliseconds. */
uint64_t xlb_now_ms(void);

#endif
