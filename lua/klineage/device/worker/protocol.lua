-- The worker protocol: JSON lines over the worker's stdin and stdout.
--
-- The engine starts `klineage worker --backend cuda|emu|fake` with stdin and
-- stdout as pipes (stderr is captured: its tail explains a crash). Each
-- request is one JSON object on one line; the worker answers each request
-- with exactly one line, in order. Every request carries an integer `id`
-- that its reply repeats. Nothing else is ever written to stdout (logs go
-- to stderr).
--
--   request:  { "id": 7, "op": "launch", ... }
--   reply:    { "id": 7, "ok": true, ... }
--          or { "id": 7, "ok": false, "error": "message", "verdict": "fault" }
--
-- `verdict` in a failed reply is one of the gate's verdicts ("fault",
-- "unsupported", "bad_request"); after a "fault" or "out_of_bounds" reply
-- the worker exits (a CUDA context is unusable after a sticky error, and
-- memory written out of bounds is not trusted) and the pool restarts it. A worker that dies without replying is a "fault" (its exit status
-- or signal and its stderr tail are the detail); one that does not answer
-- within the request's timeout is killed: "timeout".
--
-- Binary data (a cubin, buffer contents) travels as base64 in fields named
-- *_b64, or, when large, in a file the engine wrote, named by the field
-- *_path: the worker is a child on the same host, and base64 (kl.base64) and
-- JSON cost copies of the data an 80 MB scene need not make. Numbers are JSON numbers: the engine sends integers where the
-- worker needs integers (counts, seeds, geometry).
--
-- Requests, in the order a gate evaluation uses them:
--
--   hello    { protocol = 1 }
--            -> { op = "ready", protocol = 1, backend = "cuda"|"emu"|"fake", pid,
--                 device = { index, name, arch = "sm_90", sm_count, clock_mhz,
--                            memory_bytes, driver, l2_bytes },
--                 sandbox = "seccomp" | "off" (emu) }
--   load     { module = "m1", cubin_b64 = ... | cubin_path = ... (cuda),
--                             source = ..., library = path (emu: the text, and the
--                             shared object the engine built with emu.build; the
--                             sandboxed worker cannot compile),
--                             kernels = { "sgemm", ... } }
--            -> { functions = { sgemm = { registers, smem, max_threads } } }
--   alloc    { buffers = { { name = "A", type = "f32", count = n }, ... } }
--            (replaces every buffer of the previous alloc)        -> {}
--   init     { seed = s, buffers = { { name = "A", init = "uniform" | "normal" | "zeros"
--                                      | { "int", lo, hi }, stream = k }, ... } }
--            fills on the device with engine/core/randgen.h's algorithm
--            -> { checksums = { A = the backend's checksum of the bytes } }
--            (only equality matters: fake and emu hash with SHA-256, cuda
--            with a device-side sum of mixed words, gpu/device/checksum.cu)
--   upload   { name = "A", data_b64 = ... | data_path = ... [, key = k] } (custom Lua init)
--            -> { cached = false }. With a key the worker keeps the bytes
--            (cuda: a device copy, within a quarter of its memory), and a
--            later upload with the same key and no data refills the buffer
--            from them -> { cached = true }, or says { cached = false } when
--            it has none, and the engine sends the data. The engine's key
--            names (workload, params, seed, buffer): the same bytes.
--   keep     { buffer = "C@ref", key = k } keeps a copy of the buffer's bytes
--            under k, where an upload with that key and no data finds them
--            -> { kept = true | false (cuda: over the budget) }. The gate
--            keeps the baseline's outputs so: its run costs once per
--            (baseline, workload, params, seed), not once per trial.
--   poison   { buffers = { "C", ... } [, byte = 0xFF] } (every byte set:
--            0xFF is NaN in every float type; the gate varies the byte for
--            integer outputs, where 0xFF is -1, a plausible value)   -> {}
--   zero     { buffer = "C" }                                     -> {}
--   launch   { module, kernel, grid = {x,y,z}, block = {x,y,z}, smem = bytes,
--              args = { { "buf", "A" } | { "i32", 5 } | { "u32", n } | { "i64", n }
--                       | { "u64", n } | { "f32", 1.5 } | { "f64", 1.5 }, ... } }
--            (the scalar kinds are klineage.base.types.SCALAR)
--            launches and synchronizes                            -> { ms = event time }
--   read     { buffer = "C" [, index = i (0-based)] }
--            -> { data_b64 } or { value } for one element
--   batch    { steps = { <zero, launch or read request>, ... } } runs them
--            in order, as if each came alone (ids are the batch's), and
--            stops at the first failure, which names its step
--            -> { results = { <each step's reply fields> } }. A workload's
--            run that reads a counter every level (bfs: 2046 levels on the
--            grid) sends one batch per level instead of three requests.
--   snapshot { buffers = { "C" }, as = "ref" }  copies outputs aside as "C@ref" -> {}
--   restore  { buffers = { "C" }, from = "fresh" }  copies "C@fresh" back into C -> {}
--   canaries {} -> {} when the guard regions around every buffer are intact,
--            else the failure out_of_bounds naming the buffers (cuda; emu
--            has guard pages that fault at once, fake has nothing to check)
--   compare  { buffer = "C", against = "C@ref", rtol, atol }
--            |out - ref| <= atol + rtol * max|ref|, NaN/Inf never pass, integer
--            types exact -> { pass, max_abs, max_rel, max_ref, tolerance,
--                             first_bad (1-based), bad_count, nonfinite, count }
--   checksum { buffers = { "A", ... } } -> { checksums = { A = checksum } }
--   time     { sequence = { <launch or zero request>, ... }, warmup, min_samples,
--              max_samples, max_seconds, target_noise = 0.01, flush_l2 = true,
--              before_sample = { <init, restore or poison request>, ... } }
--            before_sample runs before every sample (warm-up included),
--            outside the timed region and before the L2 flush; an init
--            step of sample n uses seed + n * seed_step (seed_step = 1 by
--            default), so no two samples see the same inputs and no sample
--            finds an earlier sample's output. The canaries are checked
--            after the last sample.
--            -> { samples_ms = {...}, median_ms, ci_ms = { lo, hi }, clock_mhz,
--                 throttled, source = "cupti"|"events"|"host" }
--   metrics  { sequence = {...}, names = { "dram__bytes_read.sum", ... } }
--            -> { values = { [name] = number }, passes }
--   host_reference { so_path = "/cache/cref_<key>.so", args = <as launch> }
--            (emu only; the cuda and fake workers answer "unsupported")
--            dlopens so_path, a host shared object the engine compiled from
--            a workload's C reference (gate/reference.lua), only reading it,
--            and calls its `void kl_reference_entry(void **args)` once on
--            the worker's buffers: args[i] points at argument i's value,
--            a buffer's host address or a scalar packed as its kind. The
--            library is closed again before the reply; a crash inside it
--            kills the worker (the pool reports a "fault" with the signal)
--            -> { ms = host wall time }
--   vendor   { library = "cublas", routine = "sgemm_rowmajor", args = <as launch> }
--            one call of a vendor library routine on the worker's context
--            (cuda only), synchronized; also a step of a time sequence   -> {}
--   bye      {} -> {} and the worker exits 0
--
-- Test hooks, honoured by the fake backend only, in any request's `fake`
-- field: { crash = "SEGV" | "ABRT" | ..., hang = true, garbage = true,
--          exit = code, stderr = "text", delay = seconds, wrong_id = true,
--          partial = true (half a line, then exit),
--          close_stdin = true (reply, then stop reading but stay alive) }.
local cjson = require "cjson"
local verdicts = require "klineage.base.verdicts"
local kbase64 = require "kl.base64"

local M = {}

M.VERSION = 1

-- The verdicts after which a worker exits once it has replied: its context
-- or its memory can no longer be trusted, and the pool starts a fresh one.
M.FATAL = { fault = true, out_of_bounds = true }

M.OPS = {
  "hello", "load", "alloc", "init", "upload", "poison", "zero", "launch", "read", "batch",
  "keep", "snapshot", "restore", "canaries", "compare", "checksum", "time", "metrics", "vendor", "host_reference", "bye",
}
M.OP_SET = {}
for _, op in ipairs(M.OPS) do M.OP_SET[op] = true end

-- The scalar kinds a launch argument may carry (klineage.base.types).
M.SCALAR_TYPES = {}
for _, name in ipairs(require("klineage.base.types").SCALAR) do M.SCALAR_TYPES[name] = true end

local codec = cjson.new()
codec.encode_invalid_numbers("null")
codec.encode_sparse_array(true)
-- Debian's lua-cjson 2.1.0 writes at most 14 significant digits: a double
-- that needs more (an error maximum, 1/3 as an f64 argument) arrives
-- rounded to 14 digits.
codec.encode_number_precision(14)

-- One line of JSON (cjson escapes newlines inside strings).
function M.encode(msg) return codec.encode(msg) end

-- decode(line) -> table | nil, failure ("not JSON: ...") ; never raises.
local function decode_(line)
  local ok, v = pcall(codec.decode, line)
  if not ok then return nil, "not JSON: " .. tostring(v):gsub("^.-: ", "") end
  if type(v) ~= "table" then return nil, "not a JSON object" end
  return v
end

-- The integer a JSON number stands for, or nil.
function M.integer(v)
  if math.type(v) == "integer" then return v end
  if type(v) == "number" then return math.tointeger(v) end
  return nil
end

-- base64(data) -> text ; unbase64(text) -> bytes | nil, failure (kl.base64)
M.base64 = kbase64.encode
local unbase64_ = kbase64.decode

-- payload(req, "data") -> the bytes of req.data_b64 or of the file
-- req.data_path | nil, failure.
local function payload_(req, field)
  local text, path = req[field .. "_b64"], req[field .. "_path"]
  if type(text) == "string" then return M.unbase64(text) end
  if type(path) ~= "string" then return nil, string.format("%s_b64 or %s_path is required", field, field) end
  -- a regular file only, as every file is read (klineage.base.files); 1 GiB at most
  local data, f = require("klineage.base.files").read_file(path, 1 << 30, "an upload")
  if not data then return nil, f.message end
  return data
end

-- upload_key(req) -> the key an upload's bytes are kept under (nil: none),
-- and whether the request only asks for those kept bytes (it sends none).
function M.upload_key(req)
  local key = type(req.key) == "string" and req.key or nil
  return key, key ~= nil and req.data_b64 == nil and req.data_path == nil
end

-- Checks a request's shape. Returns true or nil, failure (bad_request). Used by workers
-- (a malformed request is answered with verdict "bad_request") and by tests.
local function check_request_(req)
  if type(req) ~= "table" then return nil, "a request must be a JSON object" end
  if not M.integer(req.id) then return nil, "request has no integer id" end
  if not M.OP_SET[req.op] then return nil, "unknown op '" .. tostring(req.op) .. "'" end
  local need = {
    load = { "module" }, alloc = { "buffers" }, init = { "seed", "buffers" },
    upload = { "name" }, keep = { "buffer", "key" }, poison = { "buffers" }, zero = { "buffer" },
    launch = { "module", "kernel", "grid", "block", "args" }, read = { "buffer" }, batch = { "steps" },
    snapshot = { "buffers", "as" }, compare = { "buffer", "against" },
    checksum = { "buffers" }, time = { "sequence" }, metrics = { "sequence", "names" },
    vendor = { "routine", "args" }, host_reference = { "so_path", "args" },
  }
  for _, field in ipairs(need[req.op] or {}) do
    if req[field] == nil then return nil, string.format("%s: missing field '%s'", req.op, field) end
  end
  if req.op == "keep" and (type(req.key) ~= "string" or type(req.buffer) ~= "string") then
    return nil, "keep: buffer and key must be strings"
  end
  if req.op == "launch" then
    for _, k in ipairs({ "grid", "block" }) do
      local g = req[k]
      if type(g) ~= "table" or #g < 1 or #g > 3 then return nil, "launch: " .. k .. " must be 1 to 3 integers" end
      for _, v in ipairs(g) do
        local n = M.integer(v)
        if not n or n < 1 then return nil, "launch: " .. k .. " must be 1 to 3 positive integers" end
      end
    end
  end
  if req.op == "launch" or req.op == "host_reference" then
    if type(req.args) ~= "table" then return nil, req.op .. ": args must be a list" end
    for i, a in ipairs(req.args) do
      if type(a) ~= "table" or #a ~= 2 then return nil, string.format("%s: args[%d] must be [kind, value]", req.op, i) end
      if a[1] ~= "buf" and not M.SCALAR_TYPES[a[1]] then
        return nil, string.format("%s: args[%d] has unknown kind '%s'", req.op, i, tostring(a[1]))
      end
    end
  end
  return true
end

-- The boundary: a malformed request or payload is bad_request.
for name, fn in pairs({ decode = decode_, unbase64 = unbase64_, payload = payload_, check_request = check_request_ }) do
  M[name] = function(...) return verdicts.lift("bad_request", fn(...)) end
end

-- The reply helpers a worker uses.
function M.ok(id, fields)
  local r = fields or {}
  r.id, r.ok = id, true
  return r
end

function M.fail(id, verdict, message)
  return { id = id, ok = false, verdict = verdict, error = message }
end

return M
