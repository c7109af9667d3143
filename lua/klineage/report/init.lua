-- Reports: a run folder rendered from its journal alone (runs/<id>/
-- journal.jsonl and the kernels in its src/), with no GPU and nothing run
-- again, as Markdown (report.md) and as one self-contained HTML page
-- (report.html: the style inline, charts as inline SVG, no script, no
-- request to anywhere).
--
--   report.render(dir) -> { kind, title, markdown, html } | nil, failure
--   report.write(dir [, out_dir]) -> { kind, md = path, html = path } | nil, failure
--       out_dir (default dir) is created; both files are written atomically;
--       writing into the run folder itself takes its lock (klineage.store.runlock)
--   A stored kernel (src/<sha>.cu) whose SHA-256 is not its name fails the
--   report (bad_input, klineage.store.runs.read_source): never shown as genuine.
--   report.kind_of(records) -> kind | nil, failure (bad_input)
--   report.KINDS: the registry, kind -> module
--
-- The registry. A kind is named by the command that made the run (its run
-- record's command, "klineage bench ..." -> bench); a run made by a script
-- (klineage run ...) is named by what its journal holds (DETECT, in order).
-- A kind's module has
--   M.build(run) -> doc (klineage.report.doc), title
--   run = { dir, id, records, warnings, first (the run record), workload =
--           the spec's name, source(sha256) -> text | nil (src/, else the
--           workload's lineage file of that hash) }
local files = require "klineage.base.files"
local journal = require "klineage.store.journal"
local page = require "klineage.report.page"
local verdicts = require "klineage.base.verdicts"
local proc = require "kl.proc"

local M = {}

M.KINDS = {
  bench = "klineage.report.bench",
  eval = "klineage.report.eval",
  optimize = "klineage.report.optimize",
  walk = "klineage.report.walk",
}

-- A journal made by a script: the first record kind found names its kind.
M.DETECT = {
  { record = "eval_unit", kind = "eval" },
  { record = "decision", kind = "optimize" },
  { record = "walk_step", kind = "walk" },
  { record = "walk_end", kind = "walk" },
  { record = "evaluation", kind = "bench" },
}

function M.kind_of(records)
  local first = records[1]
  local cmd = first and first.command
  local name = type(cmd) == "table" and cmd[2]
  if type(name) == "string" and M.KINDS[name] then return name end
  local has = {}
  for _, r in ipairs(records) do has[r.kind or ""] = true end
  for _, d in ipairs(M.DETECT) do
    if has[d.record] then return d.kind end
  end
  return nil, verdicts.failure("bad_input", string.format("no report for this run: its command (%s) has no report kind (%s)",
    type(name) == "string" and files.display(name) or "none", table.concat(M.names(), ", ")))
end

function M.names()
  local out = {}
  for k in pairs(M.KINDS) do out[#out + 1] = k end
  table.sort(out)
  return out
end

local function open_run(dir)
  local records, warnings = journal.read(dir .. "/journal.jsonl")
  if not records then
    return nil, verdicts.failure("bad_input", string.format("'%s' is not a run folder: %s", files.display(dir), warnings.message))
  end
  -- a journal written before its credentials were scrubbed on the way in
  records = require("klineage.base.redact").text(records)
  if #records == 0 then return nil, verdicts.failure("bad_input", string.format("the journal in '%s' is empty", files.display(dir))) end
  local first = records[1]
  local spec = first.specs and first.specs[1]
  local cache = {}
  local run = { dir = dir, id = first.run or dir:match("([^/]+)/*$"), records = records, warnings = warnings, first = first,
                workload = spec and spec.name }
  -- A kernel's text by its sha256: the run folder's src/, else the
  -- workload's lineage as it is now, when a version there has that hash
  -- (a walk's first kernel is stored only once something compares with it).
  local lineage
  local function from_lineage(sha)
    if not lineage then
      lineage = {}
      local refs = {}
      if spec and type(spec.path) == "string" then refs[#refs + 1] = spec.path end
      if spec and type(spec.name) == "string" then refs[#refs + 1] = spec.name end
      for _, ref in ipairs(refs) do
        local ok, w = pcall(require("klineage.workload").load, ref)
        if ok and w and next(lineage) == nil then
          for _, file in ipairs(w.lineage or {}) do
            local text = files.read_text(w.dir .. "/" .. file)
            if text then lineage[require("kl.hash").sha256(text)] = text end
          end
        end
      end
    end
    return lineage[sha]
  end
  function run.source(sha)
    if type(sha) ~= "string" or not sha:match("^%x+$") then return nil end
    if cache[sha] == nil then
      local text, f = require("klineage.store.runs").read_source(dir, sha)
      -- missing (or a hash of another length): the lineage may have it; anything else refuses the report
      if not text and f.stage ~= "open" and sha:match("^" .. string.rep("%x", 64) .. "$") then
        verdicts.raise(f.verdict, f.message)
      end
      cache[sha] = text or from_lineage(sha) or false
    end
    return cache[sha] or nil
  end
  return run
end

function M.render(dir)
  if type(dir) ~= "string" then error("report.render: a run folder expected", 2) end
  local run, f = open_run(dir)
  if not run then return nil, f end
  local kind, kf = M.kind_of(run.records)
  if not kind then return nil, kf end
  local built, title = verdicts.catch(require(M.KINDS[kind]).build, run)
  if not built then return nil, title end
  local d = built
  for _, w in ipairs(run.warnings) do
    d:md("> Note: " .. require("klineage.report.escape").md(w))
  end
  local html, pf = page.html(kind, title, d:body_html())
  if not html then return nil, pf end
  return { kind = kind, title = title, markdown = d:markdown(), html = html }
end

function M.write(dir, out_dir)
  local lock
  if not out_dir then
    local lf
    lock, lf = require("klineage.store.runlock").acquire(dir)
    if not lock then return nil, lf end
  end
  local r, f = M.render(dir)
  if not r then
    if lock then lock:release() end
    return nil, f
  end
  out_dir = out_dir or dir
  local ok, err = proc.mkdir_p(out_dir)
  if not ok then
    if lock then lock:release() end
    return nil, verdicts.failure("io_error", string.format("cannot create '%s': %s", files.display(out_dir), tostring(err)))
  end
  local md_path, html_path = out_dir .. "/report.md", out_dir .. "/report.html"
  local wok, wf = files.write_atomic(md_path, r.markdown)
  if wok then wok, wf = files.write_atomic(html_path, r.html) end
  if lock then lock:release() end
  if not wok then return nil, wf end
  return { kind = r.kind, md = md_path, html = html_path }
end

-- For the commands that make runs: the report at the run's end, never
-- losing the run to it (an error while rendering is caught and said).
-- Returns the HTML path, or nil after saying on stderr why there is none;
-- quiet: no line when it worked.
function M.after_run(command, dir, quiet)
  if not dir then return nil end
  local ok, r, f = pcall(M.write, dir)
  if ok and r then
    if not quiet then io.stderr:write(string.format("klineage %s: report: %s\n", command, files.display(r.html))) end
    return r.html
  end
  local why = ok and tostring(f and f.message or f) or tostring(r)
  io.stderr:write(string.format("klineage %s: the report could not be rendered (%s); the run is kept: klineage report %s\n",
    command, (why:gsub("\n.*", "")), files.display(dir)))
  return nil
end

return M
