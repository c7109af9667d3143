-- klineage match PATTERN FILE... : grep for code shapes, or rewrite them.
local args = require "klineage.base.args"
local exit_codes = require "klineage.base.exit_codes"
local files = require "klineage.base.files"

-- Myers' O(ND) diff over two line arrays: a list of {op, line} with op
-- " ", "-" or "+". Rewrites change few lines, so D stays small.
local function line_diff(a, b)
  local n, m = #a, #b
  local max = n + m
  local v = { [1] = 0 }
  local trace = {}
  for d = 0, max do
    local snapshot = {}
    for k = -d, d, 2 do
      local x
      if k == -d or (k ~= d and (v[k - 1] or -1) < (v[k + 1] or -1)) then
        x = v[k + 1]
      else
        x = v[k - 1] + 1
      end
      local y = x - k
      while x < n and y < m and a[x + 1] == b[y + 1] do
        x, y = x + 1, y + 1
      end
      v[k] = x
      snapshot[k] = x
      if x >= n and y >= m then
        trace[d] = snapshot
        -- Walk back through the snapshots.
        local ops = {}
        local cx, cy = n, m
        for dd = d, 1, -1 do
          local vv = trace[dd - 1]
          local kk = cx - cy
          local prev_k
          if kk == -dd or (kk ~= dd and (vv[kk - 1] or -1) < (vv[kk + 1] or -1)) then
            prev_k = kk + 1
          else
            prev_k = kk - 1
          end
          local px = vv[prev_k]
          local py = px - prev_k
          while cx > px and cy > py do
            ops[#ops + 1] = { " ", a[cx] }
            cx, cy = cx - 1, cy - 1
          end
          if cx == px then
            ops[#ops + 1] = { "+", b[cy] }
          else
            ops[#ops + 1] = { "-", a[cx] }
          end
          cx, cy = px, py
        end
        while cx > 0 and cy > 0 do
          ops[#ops + 1] = { " ", a[cx] }
          cx, cy = cx - 1, cy - 1
        end
        local out = {}
        for i = #ops, 1, -1 do out[#out + 1] = ops[i] end
        return out
      end
    end
    trace[d] = snapshot
  end
  return {}
end

local function split_lines(s)
  local t = {}
  for line in (s .. (s:sub(-1) == "\n" and "" or "\n")):gmatch("(.-)\n") do t[#t + 1] = line end
  return t
end

-- A unified diff with 3 lines of context.
local function unified(path, old, new)
  local a, b = split_lines(old), split_lines(new)
  local ops = line_diff(a, b)
  local shown = path:gsub("^/+", "")
  local out = { "--- a/" .. shown, "+++ b/" .. shown }
  local i, ctx = 1, 3
  local ai, bi = 1, 1 -- line numbers before ops[i]
  local pos = {}
  for k, op in ipairs(ops) do
    pos[k] = { ai, bi }
    if op[1] ~= "+" then ai = ai + 1 end
    if op[1] ~= "-" then bi = bi + 1 end
  end
  while i <= #ops do
    if ops[i][1] == " " then
      i = i + 1
    else
      local s = math.max(1, i - ctx)
      local e = i
      -- extend the hunk while changes are within 2*ctx lines
      local last_change = i
      local j = i
      while j <= #ops do
        if ops[j][1] ~= " " then last_change = j end
        if j - last_change > 2 * ctx then break end
        j = j + 1
      end
      e = math.min(#ops, last_change + ctx)
      local na, nb = 0, 0
      for k = s, e do
        if ops[k][1] ~= "+" then na = na + 1 end
        if ops[k][1] ~= "-" then nb = nb + 1 end
      end
      out[#out + 1] = string.format("@@ -%d,%d +%d,%d @@", pos[s][1], na, pos[s][2], nb)
      for k = s, e do out[#out + 1] = ops[k][1] .. ops[k][2] end
      i = e + 1
    end
  end
  return table.concat(out, "\n") .. "\n"
end

local function one_line(s, max)
  s = s:gsub("%s*\n%s*", " ")
  if #s > max then s = s:sub(1, max - 3) .. "..." end
  return s
end

-- The options, as args.parse takes them (tests/lua/cli_input_spec.lua
-- holds the help to them).
local FLAGS = { rewrite = "string", in_place = "boolean", json = "boolean", no_prefilter = "boolean",
                max_steps = "number", max_total_steps = "number", max_file_size = "number", pattern_file = "string", rewrite_file = "string" }

-- The matcher's work cap per attempt, passed explicitly so that the
-- documented default is this command's whatever kl.match's own is.
local DEFAULT_MAX_STEPS = 20000
local MAX_STEPS_CEILING = 0xFFFFFFFF -- kl.match takes a 32-bit cap
-- A unit's model and its matches take some 50 to 60 bytes of memory per
-- byte of source (measured: 4 MiB peaks at 234 MB, 16 MiB at 0.8 to 1.0 GB,
-- 64 MiB at 3.0 to 3.7 GB), so the ceiling keeps one file near 1 GB.
local MAX_FILE_CEILING = 16 * 1024 * 1024

-- Exit statuses (klineage.base.exit_codes: grep's, and the caps'); when several
-- apply, the first in this list of error, skipped, capped wins.
local EXIT = { matched = exit_codes.of("ok"), none = exit_codes.of("nothing_matched"), error = exit_codes.of("trouble"),
               capped = exit_codes.of("incomplete"), skipped = exit_codes.of("inputs_skipped") }

-- A positive whole number from an option, or a usage error (exit 2).
local function positive(name, v, ceiling)
  if v == nil then return nil end
  local n = math.tointeger(v)
  if not n or n < 1 then args.usage_error("--%s needs a positive whole number, got %s", name, tostring(v)) end
  if n > ceiling then args.usage_error("--%s is at most %d, got %d", name, ceiling, n) end
  return n
end

return {
  flags = FLAGS,
  exit = EXIT,
  DEFAULT_MAX_STEPS = DEFAULT_MAX_STEPS,
  MAX_FILE_CEILING = MAX_FILE_CEILING,
  summary = "find code shapes in CUDA files (grep-like), or rewrite them",
  usage = "usage: klineage match PATTERN FILE... [--rewrite TEMPLATE [--in-place]] [--json] [--no-prefilter]\n"
    .. "                      [--max-steps N] [--max-total-steps N] [--max-file-size BYTES]\n"
    .. "       klineage match --pattern-file P FILE... [--rewrite-file T [--in-place]]\n"
    .. "       klineage match [options] PATTERN -- FILE...   (after --, every word is a FILE)",
  help = [[
Finds every place in FILE... where PATTERN matches and prints it grep-like
as file:line:col: code, followed by the bindings of its metavariables.

PATTERN is CUDA code in which
  $X        matches an expression ($S where a statement goes: a statement)
  $...XS    a sequence of arguments or statements
  $N:int    an integer literal      $T:type   a type
  $id:ident an identifier           ...       anything in between
A metavariable used twice must bind equal code (ignoring spaces/comments).
Between statements, `...` also looks into nested statements, so
'if ($c) { ... __syncthreads(); ... }' finds a barrier inside a loop in
the if.

With --rewrite TEMPLATE each match is replaced by TEMPLATE, in which the
same metavariables (and `...`, in order) stand for what they matched; the
result is printed as a unified diff, or written back with --in-place.
Overlapping matches are an error, never silently resolved, and so is a
template that copies a `...` that matched into nested statements.

Files. A FILE named on the command line is searched whatever its name,
and followed if it is a link. A folder stands for the .cu and .cuh files
under it, in the byte order of their paths. Under a folder a link to a
.cu/.cuh file is followed; a link to a folder is not (it may loop or lead
out of the tree), and a note says so. A file reached twice is searched
once. Nothing but klineage itself sees the paths: it walks folders on its
own, so a file named like an option is only ever a file. Options end at
`--`: write 'klineage match PATTERN -- *' for the files of a glob, one of
which might be named like an option (--in-place, -h).

--in-place writes where a link leads (the link stays a link), keeps the
file's mode (and its owner, where we may set it), and is atomic: a
temporary in the file's folder, synced, then renamed over it, so a crash
or a full disk leaves the old text whole. Other hard links to the file
keep the old text (a warning says so). A file whose search hit the step
cap is not written (its rewrite would be partial).

Limits. Each match attempt stops after --max-steps matcher steps (default
20000); a file with such attempts gets a warning that says how many, since
matches there may be missing. The whole search of one file stops after
--max-total-steps steps (default: kl.match's, 1000000 + 64 per token of
the file), with a warning that later code was not searched, and a rewrite
of that file is not made. A file over --max-file-size bytes (default
4194304, 4 MiB; at most 16777216) is skipped with a warning, unread, and
so is anything that is not a regular file (a FIFO, a device). One file is
read and matched at a time, and freed before the next.

Exit status (the first that applies, in this order):
  2  a bad option, pattern or template, or a file that could not be read
     or written (the other files are still searched)
  4  some input was skipped: over --max-file-size, or not a regular file
  3  some match attempt hit the step cap, a file's search hit its total
     work cap, or a file's matches were too many to show (their texts,
     which nest, past 64 MiB + 16 bytes per byte of the file): the results
     may be incomplete
  0  something matched (with --rewrite: some file changed)
  1  nothing matched

options:
  --rewrite T          rewrite each match with template T
  --in-place           write rewritten files back instead of printing a diff
  --pattern-file P     read the pattern from file P (then every argument is
                       a FILE)
  --rewrite-file T     read the template from file T
  --json               print matches (with --rewrite: each file's edit
                       script) as JSON lines
  --no-prefilter       match without the literal-word prefilter
  --max-steps N        work cap per match attempt, a positive whole number
                       (default 20000, at most 4294967295)
  --max-total-steps N  work cap for the whole search of one file, a
                       positive whole number (default: kl.match's)
  --max-file-size B    skip files over B bytes, a positive whole number
                       (default 4194304, at most 16777216)]],
  run = function(argv, env)
    local a = args.parse(argv, { flags = FLAGS, min = 1 })
    local out, err_out = env and env.stdout or io.stdout, env and env.stderr or io.stderr
    local function warn(fmt, ...) err_out:write("klineage match: " .. string.format(fmt, ...) .. "\n") end
    local max_steps = positive("max-steps", a.max_steps, MAX_STEPS_CEILING) or DEFAULT_MAX_STEPS
    local max_total = positive("max-total-steps", a.max_total_steps, math.maxinteger)
    local max_size = positive("max-file-size", a.max_file_size, MAX_FILE_CEILING) or files.MAX_SOURCE_BYTES
    local match = require "klineage.pattern.match"
    -- A pattern or template file: its text without the final newline.
    local function from_file(path)
      local s, ferr = files.read_text(path)
      if not s then args.usage_error("%s", ferr.message) end
      return (s:gsub("\r?\n$", ""))
    end
    if a.pattern_file then table.insert(a.positional, 1, from_file(a.pattern_file)) end
    if a.rewrite_file then
      if a.rewrite then args.usage_error("give --rewrite or --rewrite-file, not both") end
      a.rewrite = from_file(a.rewrite_file)
    end
    if #a.positional < 2 then args.usage_error("missing FILE (see 'klineage help match')") end
    local text = a.positional[1]
    local pat, msg = match.compile(text)
    if not pat then args.usage_error("bad pattern: %s", msg.message) end
    for _, w in ipairs(pat.warnings) do warn("warning: %s", w) end
    if a.in_place and not a.rewrite then args.usage_error("--in-place needs --rewrite") end
    if a.rewrite then
      local tpl, terr = match.template(a.rewrite)
      if not tpl then args.usage_error("bad template: %s", terr.message) end
    end
    local opts = { prefilter = not a.no_prefilter, max_steps = max_steps, max_total_steps = max_total }
    local json = a.json and require "klineage.base.stable_json"
    local found, failed, skipped, capped = 0, false, 0, 0

    -- Whether the search of one file was cut short, said on stderr.
    local function report_capped(shown, stats)
      if stats.stopped then
        warn("warning: %s: the search stopped at its total work cap (%d steps): later code was not searched",
          shown, stats.max_total_steps)
      elseif stats.capped > 0 then
        warn("warning: %s: %d match attempt%s stopped at the step cap (--max-steps %d): matches there may be missing",
          shown, stats.capped, stats.capped == 1 and "" or "s", max_steps)
      elseif stats.dropped > 0 and not a.rewrite then -- a rewrite builds no result tables
        warn("warning: %s: %d match%s not shown: nested matches repeat each other's text, and theirs passed %d bytes",
          shown, stats.dropped, stats.dropped == 1 and "" or "es", stats.max_result_bytes)
      else
        return false
      end
      capped = capped + 1
      return true
    end

    -- One file: read, match, print, free (the unit closes on return).
    local function search(path)
      local shown = files.display(path)
      local src, rerr = files.read_text(path, max_size)
      if not src then
        if rerr.stage == "size" or rerr.stage == "type" then -- it changed since the walk looked
          skipped = skipped + 1
          warn("warning: %s: skipped: %s", shown, rerr.message)
        else
          failed = true
          warn("%s", rerr.message)
        end
        return
      end
      local unit <close> = match.as_unit(src, path)
      local matches, stats = pat:find(unit, opts)
      local cut = report_capped(shown, stats)
      if a.rewrite then
        if stats.stopped then return end -- kl.match refuses a rewrite of a stopped search
        local new, edits = pat:rewrite(unit, a.rewrite, opts)
        if not new then
          warn("%s: %s", shown, edits.message)
          failed = true
        elseif #edits > 0 or new ~= src then
          found = found + 1
          if json and not a.in_place then
            -- the edit script, one JSON line per file
            local list = {}
            for k, e in ipairs(edits) do
              list[k] = { kind = e.kind, old = { line = e.old.line, col = e.old.col, text = e.old.text },
                          new = { line = e.new.line, col = e.new.col, text = e.new.text } }
            end
            out:write(json.encode({ file = path, edits = list }) .. "\n")
          elseif a.in_place then
            if cut then
              warn("warning: %s: not written: its search hit the step cap, so the rewrite may be partial", shown)
            else
              local ok, werr = files.replace(path, new)
              if not ok then
                warn("%s", werr.message)
                failed = true
              elseif werr then
                warn("warning: %s", werr)
              end
            end
          else
            out:write(unified(shown, src, new))
          end
        end
        return
      end
      for _, m in ipairs(matches) do
        found = found + 1
        if json then
          local b = {}
          for name, v in pairs(m.bindings) do b[name] = { text = v.text, line = v.line, col = v.col } end
          out:write(json.encode({ file = path, line = m.line, col = m.col, end_line = m.end_line,
            end_col = m.end_col, text = m.text, bindings = b }) .. "\n")
        else
          out:write(string.format("%s:%d:%d: %s\n", shown, m.line, m.col, one_line(m.text, 120)))
          for _, name in ipairs(pat:metavariables()) do
            local v = m.bindings[name]
            if v then out:write(string.format("    $%s = %s\n", name, one_line(v.text, 100))) end
          end
        end
      end
    end

    local roots = table.move(a.positional, 2, #a.positional, 1, {})
    for _, e in ipairs(files.walk(roots)) do
      if e.error then
        failed = true
        warn("%s", e.error)
      elseif e.skip then
        skipped = skipped + 1
        warn("warning: %s: skipped: %s", files.display(e.path), e.skip)
      elseif e.note then
        warn("note: %s: %s", files.display(e.path), e.note)
      elseif e.size > max_size then
        skipped = skipped + 1
        warn("warning: %s: skipped: %d bytes, over --max-file-size (%d bytes)", files.display(e.path), e.size, max_size)
      else
        search(e.path)
      end
    end
    if failed then return EXIT.error end
    if skipped > 0 then return EXIT.skipped end
    if capped > 0 then return EXIT.capped end
    return found > 0 and EXIT.matched or EXIT.none
  end,
}
