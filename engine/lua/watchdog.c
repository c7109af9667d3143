/* kl.watchdog: the wall-clock bound of sandboxed Lua that C code cannot
 * escape. The instruction hook of lua/klineage/workload/spec_sandbox.lua only runs
 * between Lua instructions; a C function of the standard library can loop
 * for hours without reaching one (string.rep("", 2^63) copies nothing 2^63
 * times, table.remove walks whatever length __len claims). Nothing can
 * stop such a loop inside the process and leave the state sound: a jump
 * out of it could land in the middle of a table resize or of malloc. So
 * the watchdog ends the process, with one line that says why, when the
 * sandbox's deadline passes and the call has not come back.
 *
 *   watchdog.arm(seconds, line)  the process ends `seconds` from now, with
 *                                line (one line, shown as given) on stderr
 *                                and exit code 2, unless disarmed first;
 *                                a later arm replaces the deadline and line
 *   watchdog.disarm()            no deadline
 *   watchdog.left()              -> seconds until the deadline, or nil
 *
 * One thread, started on the first arm, sleeps until the deadline on a
 * monotonic clock; arm and disarm only take a lock and change the
 * deadline. The state is one static: there is one deadline per process
 * (the sandbox arms only the call running now). A forked child starts
 * without the thread and with no deadline. */
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>

#define LINE_MAX_BYTES 1024

static struct {
  pthread_mutex_t lock;
  pthread_cond_t wake;
  int started;  /* the thread runs */
  int armed;
  struct timespec deadline; /* CLOCK_MONOTONIC */
  char line[LINE_MAX_BYTES + 1]; /* ends with '\n' */
  size_t line_len;
} wd = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, {0, 0}, {0}, 0};

static int passed(const struct timespec *deadline) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec > deadline->tv_sec || (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec);
}

static void *watch(void *unused) {
  (void)unused;
  pthread_mutex_lock(&wd.lock);
  for (;;) {
    if (!wd.armed) {
      pthread_cond_wait(&wd.wake, &wd.lock);
      continue;
    }
    if (passed(&wd.deadline)) {
      /* the call is stuck where nothing else can stop it: say why and end,
       * without atexit handlers or stdio (the main thread may hold them) */
      ssize_t w = write(STDERR_FILENO, wd.line, wd.line_len);
      (void)w;
      _exit(2);
    }
    struct timespec until = wd.deadline;
    pthread_cond_timedwait(&wd.wake, &wd.lock, &until);
  }
  return NULL;
}

static void before_fork(void) { pthread_mutex_lock(&wd.lock); }
static void after_fork_parent(void) { pthread_mutex_unlock(&wd.lock); }
static void after_fork_child(void) {
  /* the thread is not copied into the child: nothing watches there */
  wd.started = 0;
  wd.armed = 0;
  pthread_mutex_unlock(&wd.lock);
}

/* Called with the lock held. Returns 0 or an errno. */
static int start_locked(void) {
  if (wd.started) return 0;
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_destroy(&wd.wake);
  pthread_cond_init(&wd.wake, &attr);
  pthread_condattr_destroy(&attr);
  static int hooked = 0;
  if (!hooked) {
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
    hooked = 1;
  }
  pthread_t t;
  int rc = pthread_create(&t, NULL, watch, NULL);
  if (rc != 0) return rc;
  pthread_detach(t);
  wd.started = 1;
  return 0;
}

static int l_arm(lua_State *L) {
  lua_Number seconds = luaL_checknumber(L, 1);
  size_t len;
  const char *line = luaL_checklstring(L, 2, &len);
  luaL_argcheck(L, seconds > 0 && seconds < 1e9, 1, "seconds must be above 0 and below 1e9");
  luaL_argcheck(L, memchr(line, '\n', len) == NULL, 2, "one line, without a newline");
  if (len > LINE_MAX_BYTES - 1) len = LINE_MAX_BYTES - 1;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  time_t whole = (time_t)seconds;
  long nsec = now.tv_nsec + (long)((seconds - (lua_Number)whole) * 1e9);
  pthread_mutex_lock(&wd.lock);
  int rc = start_locked();
  if (rc != 0) {
    pthread_mutex_unlock(&wd.lock);
    return luaL_error(L, "watchdog: cannot start its thread: %s", strerror(rc));
  }
  wd.deadline.tv_sec = now.tv_sec + whole + nsec / 1000000000L;
  wd.deadline.tv_nsec = nsec % 1000000000L;
  memcpy(wd.line, line, len);
  wd.line[len] = '\n';
  wd.line_len = len + 1;
  wd.armed = 1;
  pthread_cond_signal(&wd.wake);
  pthread_mutex_unlock(&wd.lock);
  return 0;
}

static int l_disarm(lua_State *L) {
  (void)L;
  pthread_mutex_lock(&wd.lock);
  wd.armed = 0;
  pthread_mutex_unlock(&wd.lock);
  return 0;
}

static int l_left(lua_State *L) {
  pthread_mutex_lock(&wd.lock);
  int armed = wd.armed;
  struct timespec deadline = wd.deadline;
  pthread_mutex_unlock(&wd.lock);
  if (!armed) {
    lua_pushnil(L);
    return 1;
  }
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  lua_pushnumber(L, (lua_Number)(deadline.tv_sec - now.tv_sec) + (lua_Number)(deadline.tv_nsec - now.tv_nsec) / 1e9);
  return 1;
}

int luaopen_kl_watchdog(lua_State *L) {
  static const luaL_Reg fns[] = {{"arm", l_arm}, {"disarm", l_disarm}, {"left", l_left}, {NULL, NULL}};
  luaL_newlib(L, fns);
  return 1;
}
