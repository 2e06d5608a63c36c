-- wrk: stored `POST /v1/responses`; with IDS_FILE set, each thread appends
-- the id of every 200 answer (one per line) to IDS_FILE.<thread>.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model":"m","input":"soak"}'

local counter, out = 0, nil
function setup(thread)
  counter = counter + 1
  thread:set("tid", counter)
end

function init(args)
  local path = os.getenv("IDS_FILE")
  if path then out = io.open(path .. "." .. tid, "a") end
end

function response(status, headers, body)
  if out and status == 200 then
    local id = body:match('"id":"(resp_[^"]+)"')
    if id then out:write(id, "\n"); out:flush() end
  end
end
