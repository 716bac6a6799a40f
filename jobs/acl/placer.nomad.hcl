# Nomad ACL policy of the placer's own token (harvest-placer). Least
# privilege: it labels nodes (dynamic node meta needs node write), reads the
# cluster's nodes, jobs, allocations and evaluations, and registers stage jobs
# and escalated versions of harvested jobs, only in the namespace harvested
# jobs run in (${namespace}; one block per harvested namespace). The
# admission proxy never uses this token: callers' own tokens go to Nomad.
node {
  policy = "write"
}

namespace "${namespace}" {
  capabilities = ["list-jobs", "read-job", "submit-job"]
}
