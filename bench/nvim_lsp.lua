-- Neovim as the language client, for the language-server rows of issue 48 measured with a real editor:
-- open FILE in ROOT, wait SETTLE ms for the project pass, then EDITS one-line edits of LINE (a
-- trailing comment; with REAL=1 the generated framework trainer's step_tag literal, the bench's edit).
-- Prints each edit's latency from the buffer change to the diagnostics of that version, beyond the
-- server's 300 ms debounce (the client's own debounce is 0). Run (neovim 0.7 or later):
--   ROOT=/path/to/project FILE=train.py LINE=1318 nvim --headless -u NONE -c "luafile bench/nvim_lsp.lua"
local root = os.getenv("ROOT")
local file = root .. "/" .. os.getenv("FILE")
local edits = tonumber(os.getenv("EDITS") or "10")
local settle = tonumber(os.getenv("SETTLE") or "15000")
local debounce = 300
local py = os.getenv("PY") or (vim.fn.getcwd() .. "/.venv/bin/python")  -- PY: another interpreter
local got = {}  -- version -> hrtime of its diagnostics
local first = nil
local client_id = vim.lsp.start_client({
  cmd = { py, "-m", "compile_ad_lint", "lsp", "--debounce-ms", tostring(debounce) },
  root_dir = root,
  flags = { debounce_text_changes = 0, allow_incremental_sync = true },
  handlers = {
    ["textDocument/publishDiagnostics"] = function(_, result, ctx, _)
      if result.uri == vim.uri_from_fname(file) then
        local v = result.version or -1
        got[v] = got[v] or vim.loop.hrtime()
        first = first or { vim.loop.hrtime(), #result.diagnostics }
      end
    end,
  },
})
vim.cmd("edit " .. file)
local buf = vim.api.nvim_get_current_buf()
vim.lsp.buf_attach_client(buf, client_id)
local t0 = vim.loop.hrtime()
vim.wait(60000, function() return first ~= nil end, 10)
io.stdout:write(string.format("open: %.0f ms, %d diagnostics\n", (first[1] - t0) / 1e6, first[2]))
vim.wait(settle, function() return false end, 50)  -- the project pass
local line = tonumber(os.getenv("LINE"))
local original = vim.api.nvim_buf_get_lines(buf, line - 1, line, false)[1]
local times = {}
for k = 1, edits do
  local text
  if os.getenv("REAL") then
    text = original:gsub('"fwd%-bwd"', '"fwd-bwd-' .. k .. '"')
  else
    text = original .. "  # nvim edit " .. k
  end
  local sent = vim.loop.hrtime()
  vim.api.nvim_buf_set_lines(buf, line - 1, line, false, { text })
  local version = vim.lsp.util.buf_versions[buf]
  local ok = vim.wait(30000, function() return got[version] ~= nil end, 1)
  if not ok then io.stdout:write("timeout at edit " .. k .. "\n") break end
  times[#times + 1] = (got[version] - sent) / 1e6 - debounce
  vim.wait(200, function() return false end, 10)
end
table.sort(times)
io.stdout:write("edits (ms beyond the debounce): " .. table.concat(vim.tbl_map(function(t) return string.format("%.0f", t) end, times), " ") .. "\n")
io.stdout:write(string.format("p50 %.0f ms, max %.0f ms\n", times[math.ceil(#times / 2)], times[#times]))
vim.lsp.stop_client(client_id)
vim.wait(500, function() return false end, 50)
vim.cmd("qa!")
