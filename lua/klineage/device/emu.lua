-- The emu backend's front half: lower a CUDA C kernel to C++ that compiles
-- against gpu/emu/prelude.h, compile it with the host C++ compiler into a
-- cached shared object, and run its kernels on the CPU through kl.emu.
--
--   emu.lower(source [, name [, instances]]) -> lowered | nil, failure
--       lowered = { text, kernels = { {name, line, template}... } }
--   emu.build(source, opts) -> built | nil, failure
--       lowers and compiles into the cache, loading nothing: built = { path
--       (the shared object), key, compiled, kernels, symbols, lowered }.
--       opts = { name = "kernel.cu", cxx = command, cache_dir = dir,
--                include_dirs = { dir... },
--                names = { "tiled<128, 8>", ... },  template kernels to instantiate
--                time_limit = seconds }   default klineage.device.cache's TIME_LIMIT
--       The compiler runs in a process group of its own; past time_limit
--       the whole group is killed (a kernel's constexpr work can hold g++
--       for hours) and the failure is verdict "compile_timeout".
--   emu.open(path [, lowered]) -> Module | nil, failure
--       loads a shared object build made (dlopen runs its initializers:
--       kernel code); lowered (emu.lower's, or built) gives the kernel
--       table and the template instances' symbols
--   emu.compile(source, opts) -> Module | nil, failure    build, then open
--   emu.cache_dir() -> dir, owned | nil, failure
--   module:launch(kernel, cfg) -> true, info | nil, failure     (see kl.emu)
--       kernel is a non-template __global__ name or one of opts.names
--   module:signature(kernel) -> { "ptr", "i32", ... }
--   emu.alloc(bytes, name [, elem_size]) -> Buffer             (see kl.emu)
--
-- A failure is klineage.base.verdicts': verdict "unsupported" (with construct and
-- line), "compile_error" (the host compiler's log and command),
-- "compile_timeout" (the compile ran past its time limit), "io_error"
-- (a cache folder or file refused: the path and why), "fault" (with kind =
-- "divergent barrier" where that is what it was), "launch_error" or
-- "timeout", and kl.emu's detail fields.
-- The compiler command is $KLINEAGE_EMU_CXX, else the default below; the
-- engine adds M.REQUIRED_FLAGS, -I for the prelude, -o and the file, and
-- runs it with umask 077.
--
-- Who runs what. build is the trusted compiler on the kernel's text, as
-- NVRTC is: the engine runs it (gate/session.lua), in its own process.
-- open runs kernel code (the shared object's initializers, then launches):
-- the emu worker does, inside its sandbox (lua/klineage/device/emu_worker.lua),
-- which forbids starting a compiler.
--
-- The cache. $KLINEAGE_CACHE/emu when KLINEAGE_CACHE is set, else
-- $XDG_CACHE_HOME/klineage/emu, else ~/.cache/klineage/emu (the password
-- database's home when HOME is unset); never /tmp or the current folder.
-- A shared object in it runs as this user, so the cache follows
-- klineage.device.cache's rules for other local users: every folder of its path
-- checked with lstat (its own ones real folders of this user's that no one
-- else can write, made 0700), and a .so is loaded only when it is a regular
-- file of this user's that no one else can write; anything else is the
-- failure io_error, with the path and why. open checks the same again.
-- -fno-strict-aliasing: kernels type-pun through reinterpret_cast, which
-- nvcc allows. -fstack-clash-protection: a large local array touches every
-- page it spans, so it meets the fiber's guard page instead of jumping over
-- it into another thread's stack.
--
-- What the emulator checks, and what it does not:
--   * every global buffer has a guard page on each side, and its end touches
--     the upper one: an access past the end faults at once, with the buffer,
--     element index and thread (up to 15 bytes of slack when the size is not
--     a multiple of 16, since the start stays 16-byte aligned); below the
--     start, the rest of the first page lies before the lower guard. Writes
--     into the slack on either side are found after the launch, without the
--     thread; reads there are not found;
--   * a barrier (__syncthreads or a warp exchange) that some threads of the
--     block never reach is a `divergent barrier`;
--   * shared memory starts as 0xFF bytes (NaN, -1) in every block, so reads
--     before writes show; its bounds are not checked;
--   * races: only those that some thread order exposes; run with order =
--     "reverse" and "shuffle" (several seeds) to look for them;
--   * __activemask returns the lanes of the warp waiting at the same call
--     site once no lane can run: the lanes converged there, as on a GPU.
local kemu = require "kl.emu"
local cache = require "klineage.device.cache"
local files = require "klineage.base.files"
local safedir = require "kl.safedir"

local verdicts = require "klineage.base.verdicts"

local M = {}

M.DEFAULT_CXX = "g++ -std=c++17 -O2 -fPIC -shared"
M.REQUIRED_FLAGS = "-fno-strict-aliasing -fstack-clash-protection"
M.alloc = kemu.alloc

-- --- tokens -------------------------------------------------------------------

-- Splits C/C++ source into tokens that keep every byte: ws, comment, pp (a
-- whole preprocessor line with its continuations), string, char, id, num,
-- punct (one character). Each token knows its first line.
local function tokenize(src)
  local toks, i, n, line, line_start = {}, 1, #src, 1, true
  while i <= n do
    local c = src:sub(i, i)
    local kind, e
    if c:match("%s") then
      kind, e = "ws", (src:find("%S", i) or n + 1) - 1
    elseif c == "/" and src:sub(i + 1, i + 1) == "/" then
      kind, e = "comment", (src:find("\n", i, true) or n + 1) - 1
    elseif c == "/" and src:sub(i + 1, i + 1) == "*" then
      local _, close = src:find("*/", i + 2, true)
      kind, e = "comment", close or n
    elseif c == "#" and line_start then
      kind, e = "pp", i
      while true do
        local nl = src:find("\n", e, true)
        if not nl then e = n break end
        if src:sub(nl - 1, nl - 1) == "\\" then e = nl + 1 else e = nl - 1 break end
      end
    elseif c:match("[uUL8R]") and src:find('^[uUL8]*R"', i) then
      -- A raw string: R"delim( ... )delim", quotes and all inside.
      local open = src:find('"', i, true)
      local delim = src:match('^"([^(%s]*)%(', open) or ""
      local _, close = src:find(")" .. delim .. '"', open + 1, true)
      kind, e = "string", close or n
    elseif c == '"' or c == "'" then
      local j = i + 1
      while j <= n do
        local d = src:sub(j, j)
        if d == "\\" then j = j + 2
        elseif d == c or d == "\n" then break
        else j = j + 1 end
      end
      kind, e = c == '"' and "string" or "char", math.min(j, n)
    elseif c:match("[%a_]") then
      kind, e = "id", select(2, src:find("^[%w_]*", i + 1))
    elseif c:match("%d") or (c == "." and src:sub(i + 1, i + 1):match("%d")) then
      local j = i + 1
      while j <= n do
        local d = src:sub(j, j)
        if d:match("[%w_%.]") or (d == "'" and src:sub(j + 1, j + 1):match("%w")) then -- 1'000
          if d:match("[eEpP]") and src:sub(j + 1, j + 1):match("[%+%-]") then j = j + 1 end
          j = j + 1
        else
          break
        end
      end
      kind, e = "num", j - 1
    else
      kind, e = "punct", i
    end
    local text = src:sub(i, e)
    toks[#toks + 1] = { kind = kind, text = text, line = line }
    local _, nls = text:gsub("\n", "")
    line = line + nls
    if kind == "ws" then
      if nls > 0 then line_start = true end
    elseif kind ~= "comment" then
      line_start = false
    end
    i = e + 1
  end
  return toks
end
M.tokenize = tokenize

-- --- unsupported constructs -------------------------------------------------

local UNSUPPORTED = {
  asm = "inline PTX (asm)", __asm__ = "inline PTX (asm)", __asm = "inline PTX (asm)",
  wmma = "tensor-core wmma", mma_sync = "tensor-core mma (mma_sync)",
  load_matrix_sync = "tensor-core wmma (load_matrix_sync)",
  store_matrix_sync = "tensor-core wmma (store_matrix_sync)",
  fill_fragment = "tensor-core wmma (fill_fragment)",
  __pipeline_memcpy_async = "cp.async (__pipeline_memcpy_async)",
  __pipeline_commit = "cp.async (__pipeline_commit)",
  __pipeline_wait_prior = "cp.async (__pipeline_wait_prior)",
  memcpy_async = "cp.async (memcpy_async)",
  CUtensorMap = "TMA (CUtensorMap)", cp_async_bulk_tensor = "TMA (cp.async.bulk.tensor)",
  this_grid = "cooperative groups grid sync (this_grid)",
  grid_group = "cooperative groups grid sync (grid_group)",
  sync_grids = "cooperative groups grid sync (sync_grids)",
  this_multi_grid = "cooperative groups multi-grid sync (this_multi_grid)",
  multi_grid_group = "cooperative groups multi-grid sync (multi_grid_group)",
  coalesced_threads = "cooperative groups coalesced_group (not emulated)",
  coalesced_group = "cooperative groups coalesced_group (not emulated)",
  labeled_partition = "cooperative groups labeled_partition (not emulated)",
  binary_partition = "cooperative groups binary_partition (not emulated)",
  tex1Dfetch = "texture objects (tex1Dfetch)", tex1D = "texture objects (tex1D)",
  tex2D = "texture objects (tex2D)", tex3D = "texture objects (tex3D)",
  tex2DLod = "texture objects (tex2DLod)", tex2DLayered = "texture objects (tex2DLayered)",
  cudaTextureObject_t = "texture objects (cudaTextureObject_t)",
  cudaSurfaceObject_t = "surface objects (cudaSurfaceObject_t)",
  surf2Dread = "surface objects (surf2Dread)", surf2Dwrite = "surface objects (surf2Dwrite)",
}

local UNSUPPORTED_INCLUDES = {
  ["mma.h"] = "tensor-core wmma (#include <mma.h>)",
  ["cuda_pipeline.h"] = "cp.async (#include <cuda_pipeline.h>)",
  ["cuda/pipeline"] = "cp.async (#include <cuda/pipeline>)",
  ["cuda/barrier"] = "cp.async/TMA barriers (#include <cuda/barrier>)",
  ["cuda_awbarrier.h"] = "cp.async barriers (#include <cuda_awbarrier.h>)",
  ["curand_kernel.h"] = "the cuRAND device API (#include <curand_kernel.h>)",
}

-- Headers the prelude stands in for: their #include lines are dropped.
local PROVIDED_INCLUDES = {
  ["cuda_runtime.h"] = true, ["cuda_runtime_api.h"] = true, ["cuda.h"] = true,
  ["device_launch_parameters.h"] = true, ["cuda_fp16.h"] = true, ["cuda_bf16.h"] = true,
  ["cuda_fp16.hpp"] = true, ["cuda_bf16.hpp"] = true, ["math_constants.h"] = true,
  ["cooperative_groups.h"] = true, ["cooperative_groups/reduce.h"] = true,
  ["assert.h"] = true, ["cassert"] = true, ["stdio.h"] = true, ["cstdio"] = true,
  ["device_functions.h"] = true, ["sm_60_atomic_functions.h"] = true,
}

local function include_name(pp)
  return pp:match("^#%s*include%s*[<\"]([^>\"]+)[>\"]")
end

local function significant(toks)
  local sig = {}
  for i, t in ipairs(toks) do
    if t.kind ~= "ws" and t.kind ~= "comment" then sig[#sig + 1] = i end
  end
  return sig
end

-- The first construct the emulator cannot run, as { construct, line }, or
-- nil. (Tokens for now; kl.source can take over this one function.)
function M.find_unsupported(toks)
  local first
  local sig = significant(toks)
  for k, i in ipairs(sig) do
    local t = toks[i]
    local what
    if t.kind == "id" then
      what = UNSUPPORTED[t.text]
      if not what and t.text == "texture" and toks[sig[k + 1] or 0] and toks[sig[k + 1]].text == "<" then
        what = "texture references (texture<...>)"
      end
    elseif t.kind == "pp" then
      local inc = include_name(t.text)
      what = inc and UNSUPPORTED_INCLUDES[inc]
    elseif t.text == "<" and k + 2 <= #sig and toks[sig[k + 1]].text == "<" and toks[sig[k + 2]].text == "<"
        and sig[k + 1] == i + 1 and sig[k + 2] == i + 2 then
      what = "kernel launch <<< >>> in device code (dynamic parallelism)"
    end
    if what and not first then first = { construct = what, line = t.line } end
  end
  return first
end

-- --- lowering ------------------------------------------------------------------

-- Brace scopes: a `{` right after `)` (or a trailing const/noexcept/...)
-- opens a function body; everything nested in one is function scope.
local AFTER_PARAMS = { const = true, noexcept = true, override = true, final = true, mutable = true }

-- Splits the tokens of a declaration (sig positions a..b, exclusive of the
-- `;`) into declarators; returns the type text of the first and the names.
local function declarators(toks, sig, a, b)
  local names, depth, seg_start, type_text = {}, 0, a, nil
  local function finish(s, e)
    local name_k
    for k = s, e do
      local t = toks[sig[k]]
      if t.text == "[" or t.text == "=" then break end
      if t.kind == "id" then name_k = k end
    end
    if not name_k then return end
    names[#names + 1] = toks[sig[name_k]].text
    if not type_text then
      local parts = {}
      for k = s, name_k - 1 do parts[#parts + 1] = toks[sig[k]].text end
      type_text = table.concat(parts, " ")
    end
  end
  for k = a, b do
    local t = toks[sig[k]].text
    if t == "(" or t == "[" or t == "{" or t == "<" then depth = depth + 1
    elseif t == ")" or t == "]" or t == "}" or t == ">" then depth = depth - 1
    elseif t == "," and depth == 0 then
      finish(seg_start, k - 1)
      seg_start = k + 1
    end
  end
  finish(seg_start, b)
  return type_text, names
end

-- Finds __align__(n), alignas(n) and __attribute__((...)) in sig[a..b];
-- returns the set of sig positions they cover.
local function strip_attributes(toks, sig, a, b)
  local skip = {}
  local k = a
  while k <= b do
    local t = toks[sig[k]].text
    if (t == "__align__" or t == "alignas" or t == "__attribute__") and toks[sig[k + 1]] and toks[sig[k + 1]].text == "(" then
      local depth, j = 0, k + 1
      repeat
        local u = toks[sig[j]].text
        if u == "(" then depth = depth + 1 elseif u == ")" then depth = depth - 1 end
        skip[j] = true
        j = j + 1
      until depth == 0 or j > b
      skip[k] = true
      k = j
    else
      k = k + 1
    end
  end
  return skip
end

local function newlines_of(toks, from, to)
  local n = 0
  for i = from, to do
    local _, c = toks[i].text:gsub("\n", "")
    n = n + c
  end
  return string.rep("\n", n)
end

-- Lowers kernel source to C++ for the prelude. Returns { text, kernels } or
-- nil and a verdict table. Line numbers are kept: every rewrite stays on
-- the lines it replaces.
function M.lower(source, name, instances)
  name = name or "kernel.cu"
  local toks = tokenize(source)
  local bad = M.find_unsupported(toks)
  if bad then
    return nil, verdicts.failure("unsupported", string.format("%s:%d: unsupported on emu: %s", name, bad.line, bad.construct),
      { construct = bad.construct, line = bad.line })
  end
  local sig = significant(toks)
  local out = {}
  for i, t in ipairs(toks) do out[i] = t.text end
  local kernels, seen = {}, {}
  local scopes = {} -- stack of booleans: is this brace (or an outer one) a function body?
  local function in_function() return scopes[#scopes] == true end

  local k = 1
  while k <= #sig do
    local i = sig[k]
    local t = toks[i]
    if t.kind == "pp" then
      local inc = include_name(t.text)
      if inc and PROVIDED_INCLUDES[inc] then out[i] = "// (kl.emu: provided by the prelude)" end
    elseif t.text == "{" then
      local prev = toks[sig[k - 1] or 0]
      local body = in_function() or (prev and (prev.text == ")" or AFTER_PARAMS[prev.text])) or false
      scopes[#scopes + 1] = body
    elseif t.text == "}" then
      scopes[#scopes] = nil
    elseif t.text == "__shared__" then
      -- `extern` may stand a few tokens before, past attributes.
      local extern_k
      for b = k - 1, math.max(1, k - 12), -1 do
        local u = toks[sig[b]].text
        if u == "extern" then extern_k = b break end
        if u == ";" or u == "{" or u == "}" then break end
      end
      local is_extern = extern_k ~= nil
      -- The declaration runs to the `;` at depth 0.
      local e, depth = k + 1, 0
      while e <= #sig do
        local u = toks[sig[e]].text
        if u == "(" or u == "[" or u == "{" then depth = depth + 1
        elseif u == ")" or u == "]" or u == "}" then depth = depth - 1
        elseif u == ";" and depth == 0 then break end
        e = e + 1
      end
      if is_extern then
        local skip = strip_attributes(toks, sig, k + 1, e - 1)
        local kept = {}
        for j = k + 1, e - 1 do if not skip[j] then kept[#kept + 1] = sig[j] end end
        local type_text, names = declarators(toks, kept, 1, #kept)
        local decl = {}
        for _, nm in ipairs(names) do
          decl[#decl + 1] = string.format("%s%s *const %s = reinterpret_cast<%s *>(__kl_dyn_smem);",
            in_function() and "" or "static thread_local ", type_text, nm, type_text)
        end
        local first, last = sig[extern_k], sig[e]
        for j = first, last do out[j] = "" end
        out[first] = table.concat(decl, " ") .. newlines_of(toks, first, last)
      else
        local prev = toks[sig[k - 1] or 0]
        if prev and prev.text == "static" then out[sig[k - 1]] = "" end
        if in_function() then
          local _, names = declarators(toks, sig, k + 1, e - 1)
          local poison = {}
          for _, nm in ipairs(names) do
            poison[#poison + 1] = string.format(" __kl_shared_first(&%s, sizeof %s);", nm, nm)
          end
          if sig[e] then out[sig[e]] = ";" .. table.concat(poison) end
        end
      end
      k = e
    elseif t.text == "__global__" then
      -- The kernel's name is the identifier before the first `(` that is
      -- not an attribute's.
      local j, kname = k + 1, nil
      while j <= #sig do
        local u = toks[sig[j]]
        if (u.text == "__launch_bounds__" or u.text == "__attribute__" or u.text == "__align__")
            and toks[sig[j + 1]] and toks[sig[j + 1]].text == "(" then
          local depth = 0
          j = j + 1
          repeat
            local v = toks[sig[j]].text
            if v == "(" then depth = depth + 1 elseif v == ")" then depth = depth - 1 end
            j = j + 1
          until depth == 0 or j > #sig
        elseif u.text == "(" then
          local p = toks[sig[j - 1]]
          if p.kind == "id" then kname = p.text end
          break
        elseif u.text == ";" or u.text == "{" then
          break
        else
          j = j + 1
        end
      end
      local b = k - 1
      while b >= 1 and (toks[sig[b]].kind == "string" or ({ static = 1, inline = 1, extern = 1,
          __forceinline__ = 1, __host__ = 1, __device__ = 1, __noinline__ = 1 })[toks[sig[b]].text]) do
        b = b - 1
      end
      local is_template = b >= 1 and toks[sig[b]].text == ">"
      if kname and not seen[kname] then
        seen[kname] = true
        kernels[#kernels + 1] = { name = kname, line = t.line, template = is_template }
      end
    end
    k = k + 1
  end

  local entries = {}
  local function entry(symbol, expr)
    entries[#entries + 1] = string.format(
      'extern "C" void __kl_entry_%s(void **a) { __kl::invoke(&%s, a); }\n' ..
      'extern "C" const kl_emu_param *__kl_sig_%s(int *n) { return __kl::signature(&%s, n); }\n',
      symbol, expr, symbol, expr)
  end
  for _, kn in ipairs(kernels) do
    if not kn.template then entry(kn.name, kn.name) end
  end
  -- Template instances get numbered symbols; lowered.symbols maps them.
  local symbols = {}
  for i, expr in ipairs(instances or {}) do
    symbols[expr] = "__kl_instance_" .. i
    entry(symbols[expr], expr)
  end
  -- #line takes a C string: the name shown as a diagnostic shows paths
  -- (files.display: control characters as \n, \ooo), then with \ and "
  -- escaped, so any name compiles and reads the same as NVRTC's.
  local line_name = files.display(name):gsub('[\\"]', "\\%0")
  local text = string.format('#include "prelude.h"\n#line 1 "%s"\n%s\n#line 1 "<kl.emu entries>"\n%s',
    line_name, table.concat(out), table.concat(entries))
  return { text = text, kernels = kernels, symbols = symbols }
end

-- --- compiling and caching --------------------------------------------------------

local function quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function dirname(p) return p:match("^(.*)/[^/]*$") or "." end

-- Where prelude.h lives: $KLINEAGE_HOME/gpu/emu, else next to the binary
-- (<exe>/../share/klineage/gpu/emu, in the build tree and installed alike).
function M.prelude_dir()
  local home = os.getenv("KLINEAGE_HOME")
  if home and home ~= "" then return home .. "/gpu/emu" end
  return dirname(dirname(require("kl.host").executable())) .. "/share/klineage/gpu/emu"
end

function M.cache_dir() return cache.location("emu") end

-- The first compiler diagnostic line that says error, else the log's start.
local function first_error(log)
  for l in log:gmatch("[^\n]+") do
    if l:find("error", 1, true) then return l end
  end
  return (log:sub(1, 400))
end

M.first_error = first_error

local Module = {}
Module.__index = Module

-- kl.emu's verdict words, as registered verdicts.
local EMU_VERDICT = { ["launch error"] = "launch_error", ["divergent barrier"] = "fault", timeout = "timeout",
                      fault = "fault", unsupported = "unsupported" }

function Module:launch(kernel, cfg)
  local ok, info = self.lib:launch(self.symbols[kernel] or kernel, cfg)
  if ok then return ok, info end
  if type(info) ~= "table" then return nil, verdicts.failure("bad_input", tostring(info)) end
  local fields = {}
  for k, v in pairs(info) do fields[k] = v end
  fields.kind = info.verdict
  return nil, verdicts.failure(EMU_VERDICT[info.verdict] or "internal", info.message, fields)
end

function Module:signature(kernel) return self.lib:signature(self.symbols[kernel] or kernel) end

function Module:close() self.lib:close() end

-- A shared object of the cache: true (load it), false (absent, or ours but
-- writable by others: build it again) or nil, failure (refused).
local function usable(so)
  local ok, why, what = safedir.check_file(so)
  if ok == nil then
    return nil, verdicts.failure("io_error", "the emu cache's " .. why .. ": klineage does not load it", { path = so })
  end
  return ok, what
end

-- Runs a compiler command line in a process group of its own, killed past
-- limit seconds: log, status | nil, "timeout" | nil, other reason.
local function run_compiler(cmd, limit)
  local p, perr = require("kl.proc").spawn({ argv = { "/bin/sh", "-c", cmd }, group = true })
  if not p then return nil, "cannot start it: " .. perr end
  p:close_stdin()
  local log, rerr = p:read_all(limit)
  local status = log and p:wait(10)
  p:close() -- kills what is left of its group
  if not log then return nil, rerr end
  return log, status
end

-- The prelude precompiled (g++'s prelude.h.gch), in a folder of the cache
-- named by the hash of everything that goes into it: parsing the prelude
-- and the C++ headers it includes was half of each kernel's compile (about
-- 0.2 of 0.45 CPU-s). g++ looks for prelude.h.gch in each include folder
-- before prelude.h and, where the .gch does not fit the compile (another
-- compiler version or flag), ignores it and reads the header: so a .gch
-- never changes what a kernel means, only how fast it compiles. Only for
-- the default compiler command (another may not read .gch files); built
-- once per cache, through a temporary name and a rename, and when it
-- cannot be, kernels compile without it. Returns the folder, or nil.
local pch_unavailable = {}
local function precompiled_prelude(dir, owned, pdir, prelude, abi, cxx, limit)
  if cxx ~= M.DEFAULT_CXX then return nil end
  local key = kemu.hash("pch", prelude, abi, cxx, M.REQUIRED_FLAGS)
  if pch_unavailable[key] then return nil end
  local pch_dir = dir .. "/pch-" .. key
  local gch = pch_dir .. "/prelude.h.gch"
  local safe = cache.private_dir(pch_dir, owned + 1, true)
  local have = safe and usable(gch)
  if have then return pch_dir end
  if safe and have == false then
    local tmp = string.format("%s.tmp.%d.%d", gch, require("kl.proc").getpid(), math.random(1 << 30))
    local log, status = run_compiler(string.format("umask 077 && %s %s -x c++-header -o %s %s 2>&1", cxx,
      M.REQUIRED_FLAGS, quote(tmp), quote(pdir .. "/prelude.h")), limit)
    if log and status and status.code == 0 and os.rename(tmp, gch) then return pch_dir end
    os.remove(tmp)
  end
  pch_unavailable[key] = true
  return nil
end

-- Compiles a kernel source into the cache (or finds it there).
function M.build(source, opts)
  opts = opts or {}
  local name = opts.name or "kernel.cu"
  local lowered, verdict = M.lower(source, name, opts.names)
  if not lowered then return nil, verdict end
  local pdir = opts.prelude_dir or M.prelude_dir()
  local prelude, perr = files.read_text(pdir .. "/prelude.h")
  if not prelude then error("kl.emu: cannot find the prelude: " .. perr, 0) end
  local abi = assert(files.read_text(pdir .. "/abi.h"))
  local cxx = opts.cxx or os.getenv("KLINEAGE_EMU_CXX")
  if not cxx or cxx == "" then cxx = M.DEFAULT_CXX end
  local includes = {}
  for _, d in ipairs(opts.include_dirs or {}) do includes[#includes + 1] = "-I" .. quote(d) end
  local flags = table.concat(includes, " ")
  local key = kemu.hash(lowered.text, prelude, abi, cxx, M.REQUIRED_FLAGS, flags)
  local dir, owned = opts.cache_dir, 1
  if not dir then
    dir, owned = M.cache_dir()
    if not dir then return nil, owned end
  end
  local safe, serr = cache.private_dir(dir, owned, true)
  if not safe then return nil, serr end
  local so = dir .. "/" .. key .. ".so"
  local compiled = false
  local have, uerr = usable(so)
  if have == nil then return nil, uerr end
  if not have then
    local cpp = dir .. "/" .. key .. ".cpp"
    local wok, werr = cache.write_private(cpp, lowered.text)
    if not wok then return nil, werr end
    local tmp = string.format("%s.tmp.%d.%d", so, require("kl.proc").getpid(), math.random(1 << 30))
    local limit = opts.time_limit or cache.TIME_LIMIT
    local pch_dir = precompiled_prelude(dir, owned, pdir, prelude, abi, cxx, limit)
    local cmd = string.format("umask 077 && %s %s %s-I%s %s -o %s %s 2>&1", cxx, M.REQUIRED_FLAGS,
      pch_dir and ("-I" .. quote(pch_dir) .. " ") or "", quote(pdir), flags, quote(tmp), quote(cpp))
    local log, status = run_compiler(cmd, limit)
    local rerr = not log and status
    if not log then
      os.remove(tmp)
      if rerr == "timeout" then
        return nil, verdicts.failure("compile_timeout", string.format(
          "%s: the host compiler did not finish within the compile time limit of %g s: the compile was stopped", name, limit),
          { limit = limit, command = cmd })
      end
      return nil, verdicts.failure("internal", "the host compiler: " .. tostring(rerr))
    end
    if not status or status.code ~= 0 then
      os.remove(tmp)
      return nil, verdicts.failure("compile_error", first_error(log), { log = log, command = cmd })
    end
    local rok, rerr = os.rename(tmp, so)
    if not rok then
      os.remove(tmp)
      return nil, verdicts.failure("io_error", "cannot move the compiled library into the cache: " .. tostring(rerr))
    end
    compiled = true
  end
  return { path = so, key = key, compiled = compiled, kernels = lowered.kernels, symbols = lowered.symbols,
           lowered = lowered.text }
end

M.usable = usable

-- True when so may be loaded, after the same checks as build's: its folder
-- private, the file ours and closed to others; else nil, failure. For the
-- kernels' libraries and the C references' (gate/reference.lua).
function M.loadable(so)
  local dir = so:match("^(.*)/[^/]+$") or "."
  local safe, serr = cache.private_dir(dir, 1, false)
  if safe == nil then return nil, serr end
  if not safe then return nil, verdicts.failure("io_error", string.format("the emu cache folder '%s' does not exist", dir)) end
  local have, uerr = usable(so)
  if have == nil then return nil, uerr end
  if not have then
    return nil, verdicts.failure("io_error", string.format("'%s' is not a library of the emu cache (%s)", so, uerr))
  end
  return true
end

-- Loads a shared object of the cache, after the same checks as build's.
function M.open(so, lowered)
  lowered = lowered or {}
  local loadable, lf = M.loadable(so)
  if not loadable then return nil, lf end
  local lib, lerr = kemu.load(so)
  if not lib then return nil, verdicts.failure("internal", "cannot load the compiled kernel: " .. lerr) end
  return setmetatable({ lib = lib, kernels = lowered.kernels or {}, symbols = lowered.symbols or {},
                        key = lowered.key, path = so, compiled = lowered.compiled,
                        lowered = type(lowered.lowered) == "string" and lowered.lowered or lowered.text }, Module)
end

-- Compiles (or finds in the cache) and loads a kernel source.
function M.compile(source, opts)
  local built, f = M.build(source, opts)
  if not built then return nil, f end
  return M.open(built.path, built)
end

-- Compiles a file; the name in diagnostics is the file's, and its folder
-- is searched for local #includes.
function M.compile_file(path, opts)
  local src, err = files.read_text(path)
  if not src then return nil, err end
  opts = opts or {}
  local o = { name = path, include_dirs = { dirname(path) } }
  for k, v in pairs(opts) do o[k] = v end
  return M.compile(src, o)
end

return M
