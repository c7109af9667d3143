/* kl.proc: child processes with pipes, for the isolated GPU worker.
 *
 *   proc.spawn{ argv = {...}, env = { NAME = "value" | false }, cwd = dir,
 *               outlive = false, group = false }
 *       -> Proc | nil, err        (env overlays this process's environment;
 *                                  false removes a name). The child is killed
 *                                  when this process dies (PR_SET_PDEATHSIG),
 *                                  so a hung worker never outlives a crashed
 *                                  engine and keeps its GPU (Linux ties this
 *                                  to the spawning thread: Lua's); outlive =
 *                                  true turns that off. group = true
 *                                  starts the child in a process group of
 *                                  its own, and p:kill and p:close signal
 *                                  the whole group while the child has not
 *                                  been reaped (a compiler driver's cc1plus
 *                                  dies with it).
 *   p:write(data [, timeout_s])   -> true | nil, "worker died: ..." | nil, "timeout"
 *   p:read_line([timeout_s])      -> line | nil, "timeout" | nil, "eof" | nil, "line too long"
 *   p:read_all([timeout_s])       -> all of stdout up to its end (the child closed it)
 *                                    | nil, "timeout" | nil, "output too long"
 *   proc.wait_line({ p1, p2, ... } [, timeout_s])
 *       -> i, the first child with a whole line to read (or at end of
 *          output: its read_line will not block) | nil, "timeout". One
 *          poll over all of them: the engine waits on several workers.
 *   p:close_stdin()               -> true  (the child sees end of input)
 *   p:stderr()                    -> the last 64 KiB the child wrote to stderr
 *   p:kill([sig])                 -> true | nil, err   (default "KILL")
 *   p:wait([timeout_s])           -> status | nil, "running"
 *       status = { code = n } or { signal = "SIGSEGV", signo = 11 }
 *   p:running()                   -> boolean (reaps the child when it has exited)
 *   p.pid, p:close()              (also __gc / __close: kill and reap)
 *   proc.fsync(file)              -> true | nil, err  (fflush + fsync of an io file,
 *                                    or of a folder given by path: a new file's
 *                                    name is durable once its folder is synced)
 *   proc.protocol_streams()       -> in, out: io files on the original stdin and
 *                                    stdout; fd 0 becomes /dev/null and fd 1 a copy
 *                                    of stderr, so a stray printf (a kernel's, the
 *                                    driver's) can never corrupt a worker's replies
 *   proc.mkdir_p(path)            -> true | nil, err  (mkdir -p, mode 0777 & ~umask)
 *   proc.sleep(seconds), proc.getpid(), proc.kill(pid, sig), proc.signal_name(n)
 *   proc.environ_names()          -> { name, ... }: this process's environment's names
 *                                    (for a caller that removes some from a child's)
 *
 * Safety: SIGPIPE is ignored in this process (a write to a dead child fails
 * with EPIPE, reported as "worker died"), and reset to the default in the
 * child. While writing, the child's stdout and stderr are drained into
 * buffers, so a child that writes while we write never deadlocks us. Every
 * pipe is close-on-exec, so a worker never inherits a sibling's pipes (a
 * sibling holding our pipe open would hide our child's death). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "lua/newtype.h"

extern char **environ;

#define PROC_MT "kl.Proc"
#define STDERR_TAIL (64 * 1024)
#define MAX_LINE (256u * 1024u * 1024u)

typedef struct {
  pid_t pid;
  int group;  /* the child leads a process group: signals go to -pid */
  int reaped;
  int status; /* from waitpid, once reaped */
  int in_fd, out_fd, err_fd; /* -1 when closed */
  char *out;  /* stdout bytes not yet returned as lines */
  size_t out_len, out_cap;
  char *err;  /* the tail of stderr */
  size_t err_len;
} proc_box;

static proc_box *check_proc(lua_State *L, int i) { return luaL_checkudata(L, i, PROC_MT); }

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Milliseconds left until deadline (a negative deadline: wait forever). */
static int ms_left(double deadline) {
  if (deadline < 0) return -1;
  double left = (deadline - now()) * 1000.0;
  if (left <= 0) return 0;
  return left > INT_MAX ? INT_MAX : (int)left + 1;
}

static double deadline_of(lua_State *L, int i) {
  if (lua_isnoneornil(L, i)) return -1;
  double t = luaL_checknumber(L, i);
  luaL_argcheck(L, t >= 0, i, "timeout must be >= 0 seconds");
  return now() + t;
}

static void close_fd(int *fd) {
  if (*fd >= 0) {
    close(*fd);
    *fd = -1;
  }
}

static void reap(proc_box *p, int block) {
  if (p->reaped || p->pid <= 0) return;
  int status;
  pid_t r;
  do r = waitpid(p->pid, &status, block ? 0 : WNOHANG);
  while (r < 0 && errno == EINTR);
  if (r == p->pid) {
    p->reaped = 1;
    p->status = status;
  } else if (r < 0) { /* not our child any more (reaped elsewhere) */
    p->reaped = 1;
    p->status = 0;
  }
}

static void proc_release(proc_box *p) {
  close_fd(&p->in_fd);
  close_fd(&p->out_fd);
  close_fd(&p->err_fd);
  if (p->pid > 0 && !p->reaped) {
    kill(p->group ? -p->pid : p->pid, SIGKILL);
    reap(p, 1);
  }
  free(p->out);
  p->out = NULL;
  p->out_len = p->out_cap = 0;
  free(p->err);
  p->err = NULL;
  p->err_len = 0;
}

static int proc_gc(lua_State *L) {
  proc_release(check_proc(L, 1));
  return 0;
}

/* Reads what is available on fd, at most 16 chunks (1 MiB) so that a child
 * that writes without pause cannot keep us here, into the stdout buffer or
 * the stderr tail. EOF closes the fd; so does running out of memory for
 * stdout (the reader then sees "eof"). */
static void drain(proc_box *p, int *fd, int is_err) {
  char chunk[STDERR_TAIL];
  for (int rounds = 0; rounds < 16; rounds++) {
    ssize_t n = read(*fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {
      close_fd(fd);
      return;
    }
    if (is_err) {
      size_t got = (size_t)n; /* <= STDERR_TAIL: the chunk is no larger */
      if (p->err_len + got > STDERR_TAIL) {
        size_t drop = p->err_len + got - STDERR_TAIL;
        memmove(p->err, p->err + drop, p->err_len - drop);
        p->err_len -= drop;
      }
      memcpy(p->err + p->err_len, chunk, got);
      p->err_len += got;
    } else {
      if (p->out_len + (size_t)n > p->out_cap) {
        size_t cap = p->out_cap ? p->out_cap : 4096;
        while (cap < p->out_len + (size_t)n) cap *= 2;
        char *grown = realloc(p->out, cap);
        if (!grown) {
          close_fd(fd);
          return;
        }
        p->out = grown;
        p->out_cap = cap;
      }
      memcpy(p->out + p->out_len, chunk, (size_t)n);
      p->out_len += (size_t)n;
    }
  }
}

/* Waits up to timeout_ms for the child's output (and, with want_write, for
 * room in its stdin), draining stdout and stderr. Returns the poll count
 * (0: timed out), with *writable set. */
static int pump(proc_box *p, int want_write, int timeout_ms, int *writable) {
  struct pollfd fds[3];
  int n = 0, out_i = -1, err_i = -1, in_i = -1;
  if (p->out_fd >= 0) { fds[n] = (struct pollfd){p->out_fd, POLLIN, 0}; out_i = n++; }
  if (p->err_fd >= 0) { fds[n] = (struct pollfd){p->err_fd, POLLIN, 0}; err_i = n++; }
  if (want_write && p->in_fd >= 0) { fds[n] = (struct pollfd){p->in_fd, POLLOUT, 0}; in_i = n++; }
  if (writable) *writable = 0;
  if (n == 0) return 0;
  int r;
  do r = poll(fds, (nfds_t)n, timeout_ms);
  while (r < 0 && errno == EINTR);
  if (r <= 0) return 0;
  if (out_i >= 0 && fds[out_i].revents) drain(p, &p->out_fd, 0);
  if (err_i >= 0 && fds[err_i].revents) drain(p, &p->err_fd, 1);
  if (in_i >= 0 && fds[in_i].revents && writable) *writable = 1;
  return r;
}

static void push_signal_name(lua_State *L, int signo);

static int push_died(lua_State *L, proc_box *p, const char *what) {
  reap(p, 0);
  lua_pushnil(L);
  if (p->reaped && WIFSIGNALED(p->status)) {
    push_signal_name(L, WTERMSIG(p->status));
    lua_pushfstring(L, "worker died: %s (%s)", what, lua_tostring(L, -1));
    lua_remove(L, -2);
  } else if (p->reaped && WIFEXITED(p->status)) {
    lua_pushfstring(L, "worker died: %s (exit %d)", what, WEXITSTATUS(p->status));
  } else {
    lua_pushfstring(L, "worker died: %s", what);
  }
  return 2;
}

static int proc_write(lua_State *L) {
  proc_box *p = check_proc(L, 1);
  size_t len;
  const char *data = luaL_checklstring(L, 2, &len);
  double deadline = deadline_of(L, 3);
  if (p->in_fd < 0) return push_died(L, p, "its stdin is closed");
  size_t done = 0;
  while (done < len) {
    ssize_t n = write(p->in_fd, data + done, len - done);
    if (n > 0) {
      done += (size_t)n;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EPIPE) {
      close_fd(&p->in_fd);
      return push_died(L, p, "broken pipe");
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
      lua_pushnil(L);
      lua_pushfstring(L, "worker died: write: %s", strerror(errno));
      return 2;
    }
    int writable = 0;
    int left = ms_left(deadline);
    if (left == 0 || (pump(p, 1, left, &writable) == 0 && ms_left(deadline) == 0)) {
      lua_pushnil(L);
      lua_pushliteral(L, "timeout");
      return 2;
    }
  }
  lua_pushboolean(L, 1);
  return 1;
}

static int proc_read_line(lua_State *L) {
  proc_box *p = check_proc(L, 1);
  double deadline = deadline_of(L, 2);
  for (;;) {
    char *nl = p->out_len ? memchr(p->out, '\n', p->out_len) : NULL;
    if (nl) {
      size_t line = (size_t)(nl - p->out);
      lua_pushlstring(L, p->out, line);
      p->out_len -= line + 1;
      memmove(p->out, nl + 1, p->out_len);
      return 1;
    }
    if (p->out_len > MAX_LINE) { /* garbage without newlines: give up on it */
      p->out_len = 0;
      lua_pushnil(L);
      lua_pushliteral(L, "line too long");
      return 2;
    }
    if (p->out_fd < 0) {
      lua_pushnil(L);
      lua_pushliteral(L, "eof");
      return 2;
    }
    int left = ms_left(deadline);
    if (left == 0) {
      lua_pushnil(L);
      lua_pushliteral(L, "timeout");
      return 2;
    }
    pump(p, 0, left, NULL);
  }
}

/* Everything the child writes to stdout until it closes it, lines or not
 * (an answer need not end with a newline). */
static int proc_read_all(lua_State *L) {
  proc_box *p = check_proc(L, 1);
  double deadline = deadline_of(L, 2);
  while (p->out_fd >= 0) {
    if (p->out_len > MAX_LINE) {
      p->out_len = 0;
      lua_pushnil(L);
      lua_pushliteral(L, "output too long");
      return 2;
    }
    int left = ms_left(deadline);
    if (left == 0) {
      lua_pushnil(L);
      lua_pushliteral(L, "timeout");
      return 2;
    }
    pump(p, 0, left, NULL);
  }
  lua_pushlstring(L, p->out ? p->out : "", p->out_len);
  p->out_len = 0;
  return 1;
}

/* A child whose read_line would return at once. */
static int line_ready(const proc_box *p) {
  return p->out_fd < 0 || p->out_len > MAX_LINE || (p->out_len && memchr(p->out, '\n', p->out_len));
}

#define WAIT_MAX 64

static int l_wait_line(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  double deadline = deadline_of(L, 2);
  int n = (int)luaL_len(L, 1);
  luaL_argcheck(L, n >= 1 && n <= WAIT_MAX, 1, "1 to 64 processes");
  proc_box *ps[WAIT_MAX];
  for (int i = 0; i < n; i++) {
    lua_rawgeti(L, 1, i + 1);
    ps[i] = check_proc(L, -1);
    lua_pop(L, 1);
  }
  for (;;) {
    for (int i = 0; i < n; i++) {
      if (line_ready(ps[i])) {
        lua_pushinteger(L, i + 1);
        return 1;
      }
    }
    struct pollfd fds[2 * WAIT_MAX];
    proc_box *owner[2 * WAIT_MAX];
    int is_err[2 * WAIT_MAX], m = 0;
    for (int i = 0; i < n; i++) {
      if (ps[i]->out_fd >= 0) fds[m] = (struct pollfd){ps[i]->out_fd, POLLIN, 0}, owner[m] = ps[i], is_err[m++] = 0;
      /* stderr too: a child blocked on a full stderr pipe never finishes its line */
      if (ps[i]->err_fd >= 0) fds[m] = (struct pollfd){ps[i]->err_fd, POLLIN, 0}, owner[m] = ps[i], is_err[m++] = 1;
    }
    int left = ms_left(deadline);
    if (left == 0) {
      lua_pushnil(L);
      lua_pushliteral(L, "timeout");
      return 2;
    }
    int r;
    do r = poll(fds, (nfds_t)m, left);
    while (r < 0 && errno == EINTR);
    for (int j = 0; r > 0 && j < m; j++)
      if (fds[j].revents) drain(owner[j], is_err[j] ? &owner[j]->err_fd : &owner[j]->out_fd, is_err[j]);
  }
}

static int proc_close_stdin(lua_State *L) {
  close_fd(&check_proc(L, 1)->in_fd);
  lua_pushboolean(L, 1);
  return 1;
}

static int proc_stderr(lua_State *L) {
  proc_box *p = check_proc(L, 1);
  if (p->err_fd >= 0) drain(p, &p->err_fd, 1);
  lua_pushlstring(L, p->err ? p->err : "", p->err_len);
  return 1;
}

static const struct {
  int signo;
  const char *name;
} signal_names[] = {
    {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},
    {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
    {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"}, {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
    {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"}, {SIGCHLD, "SIGCHLD"},
    {SIGCONT, "SIGCONT"}, {SIGSTOP, "SIGSTOP"}, {SIGXCPU, "SIGXCPU"}, {SIGSYS, "SIGSYS"},
};

static void push_signal_name(lua_State *L, int signo) {
  for (size_t i = 0; i < sizeof signal_names / sizeof signal_names[0]; i++)
    if (signal_names[i].signo == signo) {
      lua_pushstring(L, signal_names[i].name);
      return;
    }
  lua_pushfstring(L, "SIG%d", signo);
}

/* A signal given as a number, "KILL" or "SIGKILL". */
static int check_signal(lua_State *L, int i, int fallback) {
  if (lua_isnoneornil(L, i)) return fallback;
  if (lua_type(L, i) == LUA_TNUMBER) return (int)luaL_checkinteger(L, i);
  const char *name = luaL_checkstring(L, i);
  if (strncmp(name, "SIG", 3) == 0) name += 3;
  for (size_t k = 0; k < sizeof signal_names / sizeof signal_names[0]; k++)
    if (strcmp(signal_names[k].name + 3, name) == 0) return signal_names[k].signo;
  return luaL_argerror(L, i, lua_pushfstring(L, "unknown signal '%s'", lua_tostring(L, i)));
}

static void push_status(lua_State *L, int status) {
  lua_createtable(L, 0, 2);
  if (WIFSIGNALED(status)) {
    push_signal_name(L, WTERMSIG(status));
    lua_setfield(L, -2, "signal");
    lua_pushinteger(L, WTERMSIG(status));
    lua_setfield(L, -2, "signo");
  } else {
    lua_pushinteger(L, WEXITSTATUS(status));
    lua_setfield(L, -2, "code");
  }
}

static int proc_kill(lua_State *L) {
  proc_box *p = check_proc(L, 1);
  int sig = check_signal(L, 2, SIGKILL);
  reap(p, 0);
  if (p->reaped) {
    lua_pushnil(L);
    lua_pushliteral(L, "already exited");
    return 2;
  }
  if (kill(p->group ? -p->pid : p->pid, sig) != 0) {
    lua_pushnil(L);
    lua_pushstring(L, strerror(errno));
    return 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}

static void sleep_seconds(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

/* Waits for the child while draining its stdout and stderr: a child that
 * is blocked writing to a full pipe would otherwise never exit. */
static int proc_wait(lua_State *L) {
  proc_box *p = check_proc(L, 1);
  double deadline = deadline_of(L, 2);
  int pause_ms = 1;
  for (;;) {
    reap(p, 0);
    if (p->reaped) break;
    int left = ms_left(deadline);
    if (left == 0) break;
    int step = left < 0 || left > pause_ms ? pause_ms : left;
    if (p->out_fd >= 0 || p->err_fd >= 0) pump(p, 0, step, NULL);
    else sleep_seconds(step / 1000.0);
    if (pause_ms < 20) pause_ms *= 2;
  }
  if (!p->reaped) {
    lua_pushnil(L);
    lua_pushliteral(L, "running");
    return 2;
  }
  push_status(L, p->status);
  return 1;
}

static int proc_running(lua_State *L) {
  proc_box *p = check_proc(L, 1);
  reap(p, 0);
  lua_pushboolean(L, !p->reaped);
  return 1;
}

static int proc_close(lua_State *L) {
  proc_release(check_proc(L, 1));
  return 0;
}

static int proc_index(lua_State *L) {
  proc_box *p = check_proc(L, 1);
  const char *k = luaL_checkstring(L, 2);
  if (strcmp(k, "pid") == 0) {
    lua_pushinteger(L, p->pid);
    return 1;
  }
  kl_pushmethod(L, 1, k);
  return 1;
}

static int proc_tostring(lua_State *L) {
  proc_box *p = check_proc(L, 1);
  lua_pushfstring(L, "kl.Proc (pid %d%s)", (int)p->pid, p->reaped ? ", exited" : "");
  return 1;
}

/* The path execve needs: argv0 itself when it names a path, else its first
 * match on PATH. Pushes the path; returns 0 when nothing was found. */
static int resolve_program(lua_State *L, const char *argv0) {
  if (strchr(argv0, '/')) {
    lua_pushstring(L, argv0);
    return 1;
  }
  const char *path = getenv("PATH");
  if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
  while (*path) {
    const char *end = strchr(path, ':');
    size_t n = end ? (size_t)(end - path) : strlen(path);
    lua_pushlstring(L, n ? path : ".", n ? n : 1);
    lua_pushfstring(L, "%s/%s", lua_tostring(L, -1), argv0);
    lua_remove(L, -2);
    if (access(lua_tostring(L, -1), X_OK) == 0) return 1;
    lua_pop(L, 1);
    path += n + (end ? 1 : 0);
  }
  return 0;
}

/* Builds envp on the Lua stack: a userdata array of pointers into strings
 * anchored in a table just below it. */
static char **build_env(lua_State *L, int spec) {
  lua_getfield(L, spec, "env");
  int overlay = lua_gettop(L);
  lua_newtable(L); /* anchors */
  int anchors = lua_gettop(L);
  int n = 0;
  for (char **e = environ; *e; e++) {
    const char *eq = strchr(*e, '=');
    if (!eq) continue;
    if (lua_istable(L, overlay)) {
      lua_pushlstring(L, *e, (size_t)(eq - *e));
      int overridden = lua_rawget(L, overlay) != LUA_TNIL;
      lua_pop(L, 1);
      if (overridden) continue;
    }
    lua_pushstring(L, *e);
    lua_rawseti(L, anchors, ++n);
  }
  if (lua_istable(L, overlay)) {
    lua_pushnil(L);
    while (lua_next(L, overlay)) {
      if (lua_type(L, -2) != LUA_TSTRING)
        luaL_error(L, "proc.spawn: env keys must be strings");
      if (lua_type(L, -1) == LUA_TSTRING) {
        lua_pushfstring(L, "%s=%s", lua_tostring(L, -2), lua_tostring(L, -1));
        lua_rawseti(L, anchors, ++n);
      } else if (!(lua_type(L, -1) == LUA_TBOOLEAN && !lua_toboolean(L, -1))) {
        luaL_error(L, "proc.spawn: env.%s must be a string or false", lua_tostring(L, -2));
      }
      lua_pop(L, 1);
    }
  }
  char **envp = lua_newuserdatauv(L, sizeof(char *) * (size_t)(n + 1), 0);
  for (int i = 1; i <= n; i++) {
    lua_rawgeti(L, anchors, i);
    envp[i - 1] = (char *)lua_tostring(L, -1); /* anchored in the table */
    lua_pop(L, 1);
  }
  envp[n] = NULL;
  return envp;
}

static void ignore_sigpipe_once(void) {
  static int done = 0;
  if (!done) {
    signal(SIGPIPE, SIG_IGN);
    done = 1;
  }
}

/* In the child, between fork and exec: only async-signal-safe calls. */
static void exec_child(int in_r, int out_w, int err_w, int report_w, const char *cwd,
                       const char *program, char **argv, char **envp, pid_t parent, int outlive, int group) {
  /* If the parent died before prctl took effect, getppid() has changed. */
  if (!outlive && (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)) _exit(127);
  if (group && setpgid(0, 0) != 0) goto fail;
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigaction(SIGPIPE, &dfl, NULL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  if (dup2(in_r, 0) < 0 || dup2(out_w, 1) < 0 || dup2(err_w, 2) < 0) goto fail;
  if (cwd && chdir(cwd) != 0) goto fail;
  execve(program, argv, envp);
fail:;
  int e = errno;
  ssize_t ignored = write(report_w, &e, sizeof e);
  (void)ignored;
  _exit(127);
}

static int proc_spawn(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  ignore_sigpipe_once();
  lua_getfield(L, 1, "argv");
  luaL_argcheck(L, lua_istable(L, -1), 1, "argv must be a list of strings");
  int argv_i = lua_gettop(L);
  int argc = (int)luaL_len(L, argv_i);
  luaL_argcheck(L, argc >= 1, 1, "argv must name a program");
  char **argv = lua_newuserdatauv(L, sizeof(char *) * (size_t)(argc + 1), 0);
  for (int i = 1; i <= argc; i++) {
    if (lua_rawgeti(L, argv_i, i) != LUA_TSTRING) luaL_argerror(L, 1, "argv must be a list of strings");
    argv[i - 1] = (char *)lua_tostring(L, -1); /* anchored in the argv table */
    lua_pop(L, 1);
  }
  argv[argc] = NULL;
  lua_getfield(L, 1, "cwd");
  const char *cwd = luaL_optstring(L, -1, NULL);
  char **envp = build_env(L, 1);
  if (!resolve_program(L, argv[0])) {
    lua_pushnil(L);
    lua_pushfstring(L, "cannot run '%s': not found on PATH", argv[0]);
    return 2;
  }
  const char *program = lua_tostring(L, -1);
  lua_getfield(L, 1, "outlive");
  int outlive = lua_toboolean(L, -1);
  lua_pop(L, 1);
  lua_getfield(L, 1, "group");
  int group = lua_toboolean(L, -1);
  lua_pop(L, 1);
  pid_t parent = getpid();

  /* The box exists (closed) before any fd does, so nothing leaks. */
  proc_box *p = lua_newuserdatauv(L, sizeof *p, 0);
  memset(p, 0, sizeof *p);
  p->pid = -1;
  p->in_fd = p->out_fd = p->err_fd = -1;
  luaL_setmetatable(L, PROC_MT);
  p->err = malloc(STDERR_TAIL);
  if (!p->err) return luaL_error(L, "proc.spawn: out of memory");

  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1}, report[2] = {-1, -1};
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) ||
      pipe2(report, O_CLOEXEC)) {
    int e = errno;
    int fds[] = {in[0], in[1], out[0], out[1], err[0], err[1], report[0], report[1]};
    for (size_t i = 0; i < 8; i++) close_fd(&fds[i]);
    lua_pushnil(L);
    lua_pushfstring(L, "cannot create pipes: %s", strerror(e));
    return 2;
  }
  pid_t pid = fork();
  if (pid == 0) exec_child(in[0], out[1], err[1], report[1], cwd, program, argv, envp, parent, outlive, group);
  int fork_errno = errno;
  close(in[0]);
  close(out[1]);
  close(err[1]);
  close(report[1]);
  if (pid < 0) {
    close(in[1]);
    close(out[0]);
    close(err[0]);
    close(report[0]);
    lua_pushnil(L);
    lua_pushfstring(L, "cannot fork: %s", strerror(fork_errno));
    return 2;
  }
  p->pid = pid;
  p->group = group;
  if (group) setpgid(pid, pid); /* as the child does: whichever runs first, a kill finds the group */
  p->in_fd = in[1];
  p->out_fd = out[0];
  p->err_fd = err[0];
  fcntl(p->in_fd, F_SETFL, O_NONBLOCK);
  fcntl(p->out_fd, F_SETFL, O_NONBLOCK);
  fcntl(p->err_fd, F_SETFL, O_NONBLOCK);

  /* exec succeeded when the report pipe closes with nothing in it */
  int child_errno = 0;
  ssize_t n;
  do n = read(report[0], &child_errno, sizeof child_errno);
  while (n < 0 && errno == EINTR);
  close(report[0]);
  if (n == (ssize_t)sizeof child_errno) {
    proc_release(p);
    lua_pushnil(L);
    lua_pushfstring(L, "cannot run '%s': %s", program, strerror(child_errno));
    return 2;
  }
  return 1;
}

static int l_fsync(lua_State *L) {
  if (lua_type(L, 1) == LUA_TSTRING) {
    int fd = open(lua_tostring(L, 1), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int ok = fd >= 0 && fsync(fd) == 0;
    int e = errno;
    if (fd >= 0) close(fd);
    if (!ok) {
      lua_pushnil(L);
      lua_pushfstring(L, "cannot sync '%s': %s", lua_tostring(L, 1), strerror(e));
      return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
  }
  luaL_Stream *s = luaL_checkudata(L, 1, LUA_FILEHANDLE);
  luaL_argcheck(L, s->closef != NULL, 1, "file is closed");
  if (fflush(s->f) != 0 || fsync(fileno(s->f)) != 0) {
    lua_pushnil(L);
    lua_pushstring(L, strerror(errno));
    return 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}

static int l_mkdir_p(lua_State *L) {
  size_t n;
  const char *path = luaL_checklstring(L, 1, &n);
  luaL_argcheck(L, n > 0 && n < PATH_MAX, 1, "path empty or too long");
  char buf[PATH_MAX];
  memcpy(buf, path, n + 1);
  for (char *p = buf + 1;; p++) {
    if (*p == '/' || *p == '\0') {
      char saved = *p;
      *p = '\0';
      struct stat st;
      if (mkdir(buf, 0777) != 0 && !(errno == EEXIST && stat(buf, &st) == 0 && S_ISDIR(st.st_mode))) {
        int e = errno == EEXIST ? ENOTDIR : errno;
        lua_pushnil(L);
        lua_pushfstring(L, "cannot create '%s': %s", buf, strerror(e));
        return 2;
      }
      *p = saved;
      if (saved == '\0') break;
    }
  }
  lua_pushboolean(L, 1);
  return 1;
}

static int stream_close(lua_State *L) {
  luaL_Stream *s = luaL_checkudata(L, 1, LUA_FILEHANDLE);
  return luaL_fileresult(L, fclose(s->f) == 0, NULL);
}

/* Pushes an io file on fd; returns 0 (with fd closed) when fdopen fails. */
static int push_stream(lua_State *L, int fd, const char *mode) {
  luaL_Stream *s = lua_newuserdatauv(L, sizeof *s, 0);
  s->closef = NULL; /* closed state first */
  luaL_setmetatable(L, LUA_FILEHANDLE);
  s->f = fdopen(fd, mode);
  if (!s->f) {
    close(fd);
    return 0;
  }
  s->closef = stream_close;
  return 1;
}

static int l_protocol_streams(lua_State *L) {
  fflush(stdout);
  int in = fcntl(0, F_DUPFD_CLOEXEC, 3), out = fcntl(1, F_DUPFD_CLOEXEC, 3);
  int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (in < 0 || out < 0 || null < 0 || dup2(null, 0) < 0 || dup2(2, 1) < 0) {
    int e = errno;
    if (in >= 0) close(in);
    if (out >= 0) close(out);
    if (null >= 0) close(null);
    lua_pushnil(L);
    lua_pushfstring(L, "cannot set up the protocol streams: %s", strerror(e));
    return 2;
  }
  close(null);
  if (!push_stream(L, in, "r") || !push_stream(L, out, "w")) {
    lua_pushnil(L);
    lua_pushliteral(L, "cannot open the protocol streams");
    return 2;
  }
  return 2;
}

static int l_sleep(lua_State *L) {
  double s = luaL_checknumber(L, 1);
  luaL_argcheck(L, s >= 0, 1, "seconds must be >= 0");
  sleep_seconds(s);
  return 0;
}

static int l_getpid(lua_State *L) {
  lua_pushinteger(L, getpid());
  return 1;
}

static int l_kill(lua_State *L) {
  pid_t pid = (pid_t)luaL_checkinteger(L, 1);
  int sig = check_signal(L, 2, SIGTERM);
  if (kill(pid, sig) != 0) {
    lua_pushnil(L);
    lua_pushstring(L, strerror(errno));
    return 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}

static int l_environ_names(lua_State *L) {
  lua_newtable(L);
  lua_Integer n = 0;
  for (char **e = environ; *e; e++) {
    const char *eq = strchr(*e, '=');
    if (!eq) continue;
    lua_pushlstring(L, *e, (size_t)(eq - *e));
    lua_rawseti(L, -2, ++n);
  }
  return 1;
}

static int l_signal_name(lua_State *L) {
  push_signal_name(L, (int)luaL_checkinteger(L, 1));
  return 1;
}

static const luaL_Reg proc_methods[] = {
    {"write", proc_write},   {"read_line", proc_read_line}, {"read_all", proc_read_all}, {"close_stdin", proc_close_stdin},
    {"stderr", proc_stderr}, {"kill", proc_kill},           {"wait", proc_wait},
    {"running", proc_running}, {"close", proc_close},       {NULL, NULL},
};

static const luaL_Reg proc_meta[] = {
    {"__gc", proc_gc}, {"__close", proc_gc}, {"__index", proc_index}, {"__tostring", proc_tostring},
    {NULL, NULL},
};

static const luaL_Reg proc_functions[] = {
    {"spawn", proc_spawn}, {"fsync", l_fsync},   {"sleep", l_sleep},  {"mkdir_p", l_mkdir_p},
    {"protocol_streams", l_protocol_streams},
    {"getpid", l_getpid},  {"kill", l_kill},     {"signal_name", l_signal_name},
    {"wait_line", l_wait_line}, {"environ_names", l_environ_names},
    {NULL, NULL},
};

int luaopen_kl_proc(lua_State *L) {
  kl_newtype(L, PROC_MT, proc_meta, proc_methods);
  luaL_newlib(L, proc_functions);
  return 1;
}
