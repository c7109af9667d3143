-- Loads one HTML page in headless Chromium and says what is wrong with it:
-- a report must show without scripts, console messages or any request
-- leaving the file.
--
--   page_check.find_chromium()              -> path | nil
--   page_check.load(chromium, html, dir)    -> artifacts | nil, failure (io_error)
--       one Chromium run writes dir/page.png (a 1200 x WINDOW_HEIGHT
--       screenshot), dir/page.dom (the DOM after load), dir/chromium.log
--       (its stderr) and dir/netlog.json (every request its network stack
--       saw); artifacts = { png, dom, log, netlog, seconds }
--   page_check.console_messages(log_text)  -> { message... }
--   page_check.page_requests(netlog_text)  -> { url... } | nil, failure
--   page_check.dom_problems(dom_text)      -> { problem... }
--   page_check.png_info(path)              -> { width, height, bytes } | nil, failure
--   page_check.check(chromium, html, dir)  -> { problems, artifacts } | nil, failure
--       problem = { kind = "console" | "request" | "script" | "handler" |
--                   "external" | "exit", detail = text }
--
-- Why each channel: Chromium 156 headless prints every console message
-- (console.* and uncaught errors alike, with no level) to stderr as
-- ':INFO:CONSOLE' lines under --enable-logging=stderr; it prints nothing
-- for a failed image load, so requests are read from the NetLog. All
-- traffic goes to a proxy on a closed port, so nothing leaves the machine
-- even where a network exists. The static DOM scan catches what a load
-- may not try at all (a link, a lazy image, an inline handler).
local cjson = require "cjson"
local verdicts = require "klineage.base.verdicts"

local M = {}

M.WINDOW_WIDTH = 1200
M.WINDOW_HEIGHT = 1600
M.TIMEOUT_S = 30

-- Flags for root in a container with no display, D-Bus or GPU. The
-- background services are off so that the NetLog holds the page's traffic
-- and little else; what is left is told apart by page_requests.
M.FLAGS = {
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
  "--no-first-run", "--no-default-browser-check", "--disable-background-networking",
  "--disable-component-update", "--disable-sync", "--disable-extensions",
  "--disable-default-apps", "--disable-client-side-phishing-detection",
  "--disable-features=Translate,OptimizationHints,MediaRouter,SpellCheck",
  "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
  "--enable-logging=stderr", "--v=0",
}

local function quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

local function read(path)
  local h = io.open(path, "rb")
  if not h then return nil end
  local text = h:read("a")
  h:close()
  return text
end

-- $KL_CHROMIUM when set (a path that is not executable counts as absent),
-- else Debian's binary itself: its /usr/bin/chromium wrapper adds flags of
-- its own from /etc/chromium.d; else chromium or chromium-browser on PATH.
function M.find_chromium()
  local function executable(path) return os.execute("test -x " .. quote(path)) == true end
  local given = os.getenv("KL_CHROMIUM")
  if given and given ~= "" then return executable(given) and given or nil end
  if executable("/usr/lib/chromium/chromium") then return "/usr/lib/chromium/chromium" end
  for _, name in ipairs({ "chromium", "chromium-browser" }) do
    local h = io.popen("command -v " .. name .. " 2>/dev/null")
    local path = h:read("l")
    h:close()
    if path and path ~= "" then return path end
  end
  return nil
end

-- Chromium wants an absolute file: URL.
local function file_url(path)
  if path:sub(1, 1) ~= "/" then
    local h = io.popen("pwd")
    path = h:read("l") .. "/" .. path
    h:close()
  end
  return "file://" .. path:gsub("[^%w/%._~-]", function(c) return string.format("%%%02X", c:byte()) end)
end

function M.load(chromium, html, dir)
  if type(chromium) ~= "string" or type(html) ~= "string" or type(dir) ~= "string" then
    error("page_check.load: chromium, html and dir paths expected", 2)
  end
  if not read(html) then return nil, verdicts.failure("io_error", "cannot read " .. html) end
  local a = { png = dir .. "/page.png", dom = dir .. "/page.dom", log = dir .. "/chromium.log",
              netlog = dir .. "/netlog.json" }
  local profile = dir .. "/profile"
  os.execute("rm -rf " .. quote(profile) .. " " .. quote(a.png) .. " " .. quote(a.netlog) .. " && mkdir -p " .. quote(profile))
  local argv = { "timeout", "-k", "5", tostring(M.TIMEOUT_S), quote(chromium) }
  for _, f in ipairs(M.FLAGS) do argv[#argv + 1] = quote(f) end
  for _, f in ipairs({ "--user-data-dir=" .. profile, "--log-net-log=" .. a.netlog,
                       string.format("--window-size=%d,%d", M.WINDOW_WIDTH, M.WINDOW_HEIGHT),
                       "--screenshot=" .. a.png, "--dump-dom", file_url(html) }) do
    argv[#argv + 1] = quote(f)
  end
  local t0 = os.time()
  local _, _, code = os.execute(table.concat(argv, " ") .. " >" .. quote(a.dom) .. " 2>" .. quote(a.log) .. " </dev/null")
  a.seconds = os.time() - t0
  a.exit = code
  os.execute("rm -rf " .. quote(profile))
  if code == 124 or code == 137 then
    return nil, verdicts.failure("io_error", string.format("chromium did not finish within %d s (log: %s)", M.TIMEOUT_S, a.log))
  end
  return a
end

-- ':INFO:CONSOLE:<line>] "<message>", source: <url> (<line>)'
function M.console_messages(log_text)
  local found = {}
  for line in log_text:gmatch("[^\n]+") do
    if line:find(":CONSOLE", 1, true) then found[#found + 1] = line:match("%]%s*(.*)$") or line end
  end
  return found
end

-- A request is the page's when its initiator is an origin (a file: page's
-- is "null") or its network isolation key names the file: site; the
-- browser's own requests (component updates, account checks) say "not an
-- origin" and have no file: key.
function M.page_requests(netlog_text)
  local ok, log = pcall(cjson.decode, netlog_text or "")
  if not ok or type(log) ~= "table" or type(log.events) ~= "table" then
    return nil, verdicts.failure("io_error", "the NetLog is missing or does not parse: Chromium did not shut down cleanly")
  end
  local start_job = log.constants and log.constants.logEventTypes and log.constants.logEventTypes.URL_REQUEST_START_JOB
  if not start_job then return nil, verdicts.failure("io_error", "the NetLog names no URL_REQUEST_START_JOB event type") end
  local urls = {}
  for _, e in ipairs(log.events) do
    local p = e.params
    if e.type == start_job and type(p) == "table" and type(p.url) == "string" then
      local nik = type(p.network_isolation_key) == "string" and p.network_isolation_key or ""
      if p.initiator ~= "not an origin" or nik:find("file:", 1, true) then urls[#urls + 1] = p.url end
    end
  end
  return urls
end

-- Attributes whose value is a URL the page loads or goes to.
local URL_ATTRIBUTES = { src = true, href = true, ["xlink:href"] = true, srcset = true, poster = true,
                         data = true, action = true, formaction = true, background = true, ping = true }

-- Only a fragment stays inside the file; a data: URI is the file's own
-- bytes. Everything else (a scheme, //host, a relative path) reaches out.
local function external(url)
  url = url:gsub("^%s+", "")
  if url:sub(1, 1) == "#" then return false end
  if url:lower():match("^data:") then return false end
  return true
end

local function unescape(value)
  return (value:gsub("&quot;", '"'):gsub("&#39;", "'"):gsub("&lt;", "<"):gsub("&gt;", ">"):gsub("&amp;", "&"))
end

-- The dumped DOM is Chromium's serialization: attribute values are always
-- in double quotes, with '"' written as &quot;.
function M.dom_problems(dom)
  local problems = {}
  local function add(kind, detail) problems[#problems + 1] = { kind = kind, detail = detail } end
  if dom:lower():find("<script", 1, true) then add("script", "the page holds a <script> element") end
  for tag in dom:gmatch("<[%a][^>]*>") do
    local name = tag:match("^<([%w:-]+)"):lower()
    if name == "meta" and tag:lower():find('http-equiv="refresh"', 1, true) then add("external", "a <meta http-equiv=refresh>") end
    for attr, value in tag:gmatch('%s([%w:_-]+)="([^"]*)"') do
      attr = attr:lower()
      value = unescape(value)
      if attr:match("^on") then add("handler", string.format("<%s %s=...>", name, attr)) end
      if URL_ATTRIBUTES[attr] and external(value) then add("external", string.format("<%s %s=%q>", name, attr, value)) end
    end
  end
  -- CSS: in <style> elements and style= attributes alike.
  for inside in dom:gmatch("url%(%s*([^)]*)%)") do
    local url = unescape(inside):gsub("^[\"']", ""):gsub("[\"']%s*$", "")
    if external(url) then add("external", string.format("url(%s)", url)) end
  end
  if dom:lower():find("@import", 1, true) then add("external", "a CSS @import") end
  return problems
end

local function be32(s, at)
  local a, b, c, d = s:byte(at, at + 3)
  return ((a * 256 + b) * 256 + c) * 256 + d
end

function M.png_info(path)
  local bytes = read(path)
  if not bytes then return nil, verdicts.failure("io_error", "no screenshot at " .. path) end
  if bytes:sub(1, 8) ~= "\137PNG\r\n\26\n" or bytes:sub(13, 16) ~= "IHDR" then
    return nil, verdicts.failure("io_error", path .. " is not a PNG")
  end
  return { width = be32(bytes, 17), height = be32(bytes, 21), bytes = #bytes }
end

function M.check(chromium, html, dir)
  local a, f = M.load(chromium, html, dir)
  if not a then return nil, f end
  local problems = {}
  local function add(kind, detail) problems[#problems + 1] = { kind = kind, detail = detail } end
  local log = read(a.log) or ""
  if a.exit ~= 0 then add("exit", string.format("chromium exited with %s (log: %s)", tostring(a.exit), a.log)) end
  for _, m in ipairs(M.console_messages(log)) do add("console", m) end
  local urls, nf = M.page_requests(read(a.netlog))
  if not urls then return nil, nf end
  for _, u in ipairs(urls) do add("request", u) end
  local dom = read(a.dom) or ""
  if not dom:find("<html", 1, true) then add("exit", "chromium dumped no DOM (log: " .. a.log .. ")") end
  for _, p in ipairs(M.dom_problems(dom)) do problems[#problems + 1] = p end
  return { problems = problems, artifacts = a, dom = dom }
end

return M
