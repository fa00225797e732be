-- Argo CD health of a StorageBenchmarkSchedule (resource.customizations.
-- health.storagebench.io_StorageBenchmarkSchedule; docs/install.md). A
-- schedule that cannot run is Degraded, a suspended one Suspended, one
-- the operator scheduled Healthy (its runs' own health is theirs).
local hs = { status = "Progressing", message = "waiting for the operator" }
local conditions = {}
if obj.status ~= nil and obj.status.conditions ~= nil then
  conditions = obj.status.conditions
end
for _, c in ipairs(conditions) do
  if c.type == "Stalled" and c.status == "True" then
    hs.status = "Degraded"
    hs.message = c.reason .. ": " .. (c.message or "")
    return hs
  end
end
if obj.spec ~= nil and obj.spec.suspend == true then
  hs.status = "Suspended"
  hs.message = "suspended: no new run is created"
  return hs
end
for _, c in ipairs(conditions) do
  if c.type == "Ready" and c.status == "True" then
    hs.status = "Healthy"
    hs.message = c.message or c.reason
  end
end
return hs
