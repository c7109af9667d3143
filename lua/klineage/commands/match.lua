-- klineage match PATTERN FILE... : grep for code shapes, or rewrite them.
local args = require "klineage.args"
local files = require "klineage.files"

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

local FLAGS = { rewrite = "string", in_place = "boolean", json = "boolean", no_prefilter = "boolean",
                max_steps = "number", pattern_file = "string", rewrite_file = "string" }

return {
  flags = FLAGS,
  summary = "find code shapes in CUDA files (grep-like), or rewrite them",
  usage = "usage: klineage match PATTERN FILE... [--rewrite TEMPLATE [--in-place]] [--json] [--no-prefilter] [--max-steps N]\n"
    .. "       klineage match --pattern-file P FILE... [--rewrite-file T [--in-place]]",
  help = [[
Finds every place in FILE... where PATTERN matches and prints it grep-like
as file:line:col: code, followed by the bindings of its metavariables. A
folder stands for the .cu and .cuh files under it.

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

Exits 0 when something matched, 1 when nothing did, 2 on a bad pattern,
template or file.

options:
  --rewrite T      rewrite each match with template T
  --in-place       write rewritten files back instead of printing a diff
  --pattern-file P read the pattern from file P (then every argument is a FILE)
  --rewrite-file T read the template from file T
  --json           print matches (with --rewrite: each file's edit script)
                   as JSON lines
  --no-prefilter   match without the literal-word prefilter
  --max-steps N    work cap per match attempt (default 20000)]],
  run = function(argv, env)
    local a = args.parse(argv, { flags = FLAGS, min = 1 })
    local out, err_out = env and env.stdout or io.stdout, env and env.stderr or io.stderr
    local match = require "klineage.match"
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
    for _, w in ipairs(pat.warnings) do err_out:write("klineage match: warning: " .. w .. "\n") end
    if a.in_place and not a.rewrite then args.usage_error("--in-place needs --rewrite") end
    if a.rewrite then
      local tpl, terr = match.template(a.rewrite)
      if not tpl then args.usage_error("bad template: %s", terr.message) end
    end
    local opts = { prefilter = not a.no_prefilter, max_steps = a.max_steps and math.floor(a.max_steps) or nil }
    local cjson = a.json and require "cjson"
    local found, failed = 0, false
    -- A folder stands for the CUDA files under it (.cu, .cuh), sorted.
    local paths = {}
    for i = 2, #a.positional do
      local path = a.positional[i]
      local quoted = "'" .. path:gsub("'", "'\\''") .. "'"
      if os.execute("test -d " .. quoted) then
        local p = io.popen("find " .. quoted .. " -type f \\( -name '*.cu' -o -name '*.cuh' \\) | LC_ALL=C sort")
        for f in p:lines() do paths[#paths + 1] = f end
        p:close()
      else
        paths[#paths + 1] = path
      end
    end
    for _, path in ipairs(paths) do
      local src, rerr = files.read_text(path)
      if not src then args.usage_error("%s", rerr.message) end
      local unit = match.as_unit(src, path)
      if a.rewrite then
        local new, edits = pat:rewrite(unit, a.rewrite, opts)
        if not new then
          err_out:write(string.format("klineage match: %s: %s\n", path, edits.message))
          failed = true
        elseif #edits > 0 or new ~= src then
          found = found + 1
          if cjson and not a.in_place then
            -- the edit script, one JSON line per file
            local list = {}
            for k, e in ipairs(edits) do
              list[k] = { kind = e.kind, old = { line = e.old.line, col = e.old.col, text = e.old.text },
                          new = { line = e.new.line, col = e.new.col, text = e.new.text } }
            end
            out:write(cjson.encode({ file = path, edits = list }) .. "\n")
          elseif a.in_place then
            local ok, werr = files.write_atomic(path, new)
            if not ok then
              err_out:write(string.format("klineage match: cannot write '%s': %s\n", path, werr))
              failed = true
            end
          else
            out:write(unified(path, src, new))
          end
        end
      else
        local matches = pat:find(unit, opts)
        for _, m in ipairs(matches) do
          found = found + 1
          if cjson then
            local b = {}
            for name, v in pairs(m.bindings) do b[name] = { text = v.text, line = v.line, col = v.col } end
            out:write(cjson.encode({ file = path, line = m.line, col = m.col, end_line = m.end_line,
              end_col = m.end_col, text = m.text, bindings = b }) .. "\n")
          else
            out:write(string.format("%s:%d:%d: %s\n", path, m.line, m.col, one_line(m.text, 120)))
            for _, name in ipairs(pat:metavariables()) do
              local v = m.bindings[name]
              if v then out:write(string.format("    $%s = %s\n", name, one_line(v.text, 100))) end
            end
          end
        end
      end
    end
    if failed then return 2 end
    return found > 0 and 0 or 1
  end,
}
