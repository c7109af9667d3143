-- klineage run tests/browser/check_page.lua PAGE.html [OUT_DIR]
-- Loads PAGE.html in headless Chromium (see page_check.lua) and prints one
-- line per problem. OUT_DIR keeps page.png, page.dom, chromium.log and
-- netlog.json (default: a scratch folder, printed).
-- Exit: 0 clean, 1 problems, 2 usage or Chromium failed to run, 77 no
-- Chromium and $CI unset (ctest's skip code); with $CI set, a missing
-- Chromium is 2.
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$") or "."
local page_check = dofile(here .. "/page_check.lua")

local html, dir = arg[1], arg[2]
if not html then
  io.stderr:write("usage: klineage run tests/browser/check_page.lua PAGE.html [OUT_DIR]\n")
  return 2
end
local chromium = page_check.find_chromium()
if not chromium then
  local ci = os.getenv("CI")
  if ci and ci ~= "" then
    io.stderr:write("check_page: no chromium on PATH (nor $KL_CHROMIUM) and CI is set: scripts/install-deps.sh scripts/browser-packages.txt installs it\n")
    return 2
  end
  io.stderr:write("check_page: SKIP: no chromium on PATH (nor $KL_CHROMIUM); install scripts/browser-packages.txt\n")
  return 77
end
if not dir then
  dir = os.tmpname() .. ".d"
end
assert(os.execute("mkdir -p '" .. dir:gsub("'", "'\\''") .. "'"))

local result, f = page_check.check(chromium, html, dir)
if not result then
  io.stderr:write("check_page: " .. tostring(f) .. "\n")
  return 2
end
for _, p in ipairs(result.problems) do print(p.kind .. ": " .. p.detail) end
local png = page_check.png_info(result.artifacts.png)
print(string.format("%s: %d problem(s); %s; artifacts in %s", html, #result.problems,
  png and string.format("screenshot %dx%d, %d bytes", png.width, png.height, png.bytes) or "no screenshot", dir))
return #result.problems == 0 and png and 0 or 1
