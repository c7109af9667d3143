-- ctest's entry for the browser check (label browser):
--   klineage run tests/browser/run.lua
-- Runs report_spec.lua when Chromium is there. Without it: exit 77 (ctest
-- SKIP_RETURN_CODE) with a message when $CI is unset, a failure when $CI is
-- set, since CI installs it (make test: scripts/browser-packages.txt).
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$") or "."
local page_check = dofile(here .. "/page_check.lua")

if not page_check.find_chromium() then
  local ci = os.getenv("CI")
  if ci and ci ~= "" then
    io.stderr:write("browser: FAIL: CI is set but chromium is not on PATH (nor $KL_CHROMIUM);\n"
      .. "  scripts/install-deps.sh scripts/packages.txt scripts/browser-packages.txt installs it\n")
    return 1
  end
  io.stderr:write("browser: SKIP: chromium is not on PATH (nor $KL_CHROMIUM); install it with\n"
    .. "  scripts/install-deps.sh scripts/packages.txt scripts/browser-packages.txt\n")
  return 77
end
local _, failed = require("klineage.cli.testing").run({ here .. "/report_spec.lua" }, { verbose = true })
return failed == 0 and 0 or 1
