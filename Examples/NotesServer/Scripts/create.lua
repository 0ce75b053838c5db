-- wrk script: POST /notes with a new note, spread over the seeded folders.
local counter = 0
local folders = tonumber(os.getenv("FOLDERS") or "20")

request = function()
  counter = counter + 1
  local body = string.format(
    '{"folder":"folder-%d","title":"load %d","body":"Written by the load script."}',
    counter % folders, counter)
  return wrk.format("POST", "/notes", { ["Content-Type"] = "application/json" }, body)
end
