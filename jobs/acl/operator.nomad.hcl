# Nomad ACL policy granting the Harvest capability: a token with it may
# change the placer (PUT/DELETE /v1/policy and /v1/tenants, POST
# /v1/classes/refresh and /v1/history/samples) and read it when its reads
# are closed. Nomad policies cannot carry capabilities of their own
# invention, so Harvest's is a variables path the placer checks the token's
# policies against (acl { namespace, variable_path } of the placer).
namespace "${namespace}" {
  variables {
    path "harvest/placer" {
      capabilities = ["write", "read"]
    }
  }
}
