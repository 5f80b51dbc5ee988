-- A headless Neovim session driving the adapter through nvim-dap, as docs/USING.md configures
-- it: breakpoints, Step Into / Over / Out, Step Back, Reverse Continue, Continue, the variables
-- of each stop and an evaluation. Each stop is printed as one line ("stop <reason> <func>:<line>
-- name=value ..."); the run ends with "done" or "FAILED: why" (nvim's exit status says the same).
-- Run by scripts/clients/nvim-dap.sh, which says what it needs.
local dap = require("dap")
local program = os.getenv("NDBG_CHECK_PROGRAM")
local adapter = os.getenv("NDBG_CHECK_ADAPTER")

-- The configuration of docs/USING.md ("Any DAP client"), as a user's init.lua has it.
dap.adapters["neural-python"] = { type = "executable", command = "node", args = { adapter } }
dap.configurations.python = {
  { type = "neural-python", request = "launch", name = "Predict file", program = "${file}", mode = "predict" },
}

local function say(line) io.stdout:write(line .. "\n") io.stdout:flush() end
local function finish(ok, why)
  say(ok and "done" or ("FAILED: " .. why))
  vim.schedule(function() vim.cmd(ok and "qall!" or "cquit! 1") end)
end
vim.defer_fn(function() finish(false, "no end within 180 s") end, 180000)

-- The moves made, one per stop, from the first stop (the breakpoint on line 9, v = 1); the last
-- Continue runs past the third hit to the end.
local moves = { "step_into", "step_over", "step_out", "step_back", "step_back", "reverse_continue", "continue", "continue", "continue", "continue" }
local n = 0

dap.listeners.after.event_stopped["ndbg-check"] = function(session, body)
  session:request("stackTrace", { threadId = body.threadId or 1 }, function(err, st)
    if err then return finish(false, "stackTrace: " .. tostring(err.message or err)) end
    local frame = st.stackFrames[1]
    session:request("scopes", { frameId = frame.id }, function(err2, sc)
      if err2 then return finish(false, "scopes: " .. tostring(err2.message or err2)) end
      session:request("variables", { variablesReference = sc.scopes[1].variablesReference }, function(err3, vs)
        if err3 then return finish(false, "variables: " .. tostring(err3.message or err3)) end
        local shown = {}
        for _, v in ipairs(vs.variables) do
          if not v.value:find("^<function") then table.insert(shown, v.name .. "=" .. v.value) end
        end
        say(string.format("stop %s %s:%d %s", body.reason, frame.name, frame.line, table.concat(shown, " ")))
        session:request("evaluate", { expression = "len(values) if 'values' in dir() else None", frameId = frame.id, context = "repl" }, function(err4, ev)
          say("  evaluate -> " .. (err4 and ("error: " .. tostring(err4.message or err4)) or ev.result))
          n = n + 1
          local move = moves[n]
          if not move then return finish(false, "more stops than moves") end
          say("  " .. move)
          vim.schedule(function() dap[move]() end)
        end)
      end)
    end)
  end)
end
dap.listeners.after.event_terminated["ndbg-check"] = function()
  if n == #moves then finish(true) else finish(false, "ended after " .. n .. " moves") end
end
dap.listeners.after.event_output["ndbg-check"] = function(_, body)
  if body.category == "stdout" then say("  stdout: " .. body.output:gsub("\n$", "")) end
end

vim.cmd("edit " .. program)
vim.bo.filetype = "python" -- (no filetype detection under -u NONE)
vim.api.nvim_win_set_cursor(0, { 9, 0 })
dap.set_breakpoint()
dap.continue()
